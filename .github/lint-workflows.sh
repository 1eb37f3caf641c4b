#!/usr/bin/env bash
# Lints the GitHub workflows and issue templates, offline:
#
# - check-jsonschema validates them against the schemas it ships (GitHub workflows, issue
#   forms, the issue chooser's config) and requires a `timeout-minutes` on every job;
# - zizmor audits the workflows for security mistakes (unpinned actions, template
#   injection, credentials left in the checkout, cache poisoning in a release, …);
# - actionlint, if it is on PATH, type-checks expressions and runs shellcheck on each
#   `run:` script.
#
# The first two are installed from PyPI, at the versions pinned below, into
# .tools/workflow-lint/ (a Python virtual environment). Run from anywhere:
#
#     bash .github/lint-workflows.sh
set -euo pipefail
cd "$(dirname "$0")/.."

ZIZMOR_VERSION=1.32.0
CHECK_JSONSCHEMA_VERSION=0.39.0
venv=.tools/workflow-lint

if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
    if command -v apt-get >/dev/null; then
        sudo_if_needed=""
        [ "$(id -u)" -ne 0 ] && sudo_if_needed="sudo"
        $sudo_if_needed apt-get install -y -qq --no-install-recommends python3-venv >/dev/null
    else
        echo "error: the workflow lint needs Python 3 with venv (python3-venv)" >&2
        exit 1
    fi
fi
if ! "$venv/bin/zizmor" --version 2>/dev/null | grep -qx "zizmor $ZIZMOR_VERSION" \
    || ! "$venv/bin/check-jsonschema" --version 2>/dev/null | grep -q "version $CHECK_JSONSCHEMA_VERSION\$"; then
    echo "Installing zizmor $ZIZMOR_VERSION and check-jsonschema $CHECK_JSONSCHEMA_VERSION into $venv …"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check \
        "zizmor==$ZIZMOR_VERSION" "check-jsonschema==$CHECK_JSONSCHEMA_VERSION"
fi

workflows=(.github/workflows/*.yml)
"$venv/bin/check-jsonschema" --builtin-schema vendor.github-workflows "${workflows[@]}"
"$venv/bin/check-jsonschema" --builtin-schema custom.github-workflows-require-timeout "${workflows[@]}"
"$venv/bin/check-jsonschema" --builtin-schema vendor.github-issue-forms .github/ISSUE_TEMPLATE/erratum.yml
"$venv/bin/check-jsonschema" --builtin-schema vendor.github-issue-config .github/ISSUE_TEMPLATE/config.yml
"$venv/bin/zizmor" --offline --no-progress .github/workflows/
if command -v actionlint >/dev/null; then
    actionlint "${workflows[@]}"
    echo "actionlint: no problems"
fi
