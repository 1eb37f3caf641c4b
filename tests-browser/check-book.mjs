// Checks the built book (book/, from `cargo xtask build`) in headless Chromium. Serves
// book/ itself on 127.0.0.1 (a random free port). Three groups of checks:
//
// - core: rendered math, the level filter, search, sidebar level badges, readable colours
//   in every theme, no console message on the pages these checks open;
// - pages: every page of the book, once: no console warning or error (highlight.js warns
//   about a code block in a language it does not know), every ```wgsl block highlighted,
//   the entry page's status box; screenshots of a WGSL block, the sidebar, the status box;
// - levels: the level path. At "show up to" levels 1 and 2, every visible link of every
//   page must lead to a chapter or section that is visible at that level. The one exception
//   is a chapter's list of contents: on a chapter's index page (a page named index.html in
//   a directory), a link inside a list item (`li a`) or in the first cell of a table row
//   (`tr > td:first-child a`) that leads to a whole chapter (no #fragment) may lead to a
//   chapter above the level, and must then carry that chapter's level badge right after it
//   (theme/levels.js adds it). A link whose text ends in "(level N)" names its target's
//   level itself (the glossary's links do), so it may lead to hidden text too; N must be
//   the target's level, at every level. Every violation is listed, with
//   the page, the link's text, its target and the target's level.
//
// - pdf: the PDF from `cargo xtask pdf` (book/<repository name>.pdf): its title page names
//   the version and commit the pages' footers show; screenshots of its title page, its
//   contents and its first page with a figure (poppler's pdftoppm).
//
// The core group also checks each page's footer (version, commit) and its "Report a
// problem with this page" link, and the link-preview tags and sitemap.xml that
// `cargo xtask build` writes.
//
//   cd tests-browser && npm ci && node check-book.mjs
//   node check-book.mjs --only levels        # one group (or several: --only core,pages)
//
// Without --only: every group, the pdf group only if the PDF is there (it says so if not).
//
// Environment: CHROMIUM (default /usr/bin/chromium), BOOK_DIR (default ../book),
// SCREENSHOT_DIR (default ../ci-artifacts/screenshots).
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..');
const bookDir = path.resolve(process.env.BOOK_DIR || path.join(repo, 'book'));
const shotDir = path.resolve(process.env.SCREENSHOT_DIR || path.join(repo, 'ci-artifacts', 'screenshots'));
const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
const CHAPTER = 'how-to-use-this-book.html';
// A page with WGSL code, for the screenshot of a highlighted block.
const WGSL_PAGE = 'module-1/immediate-gpu/the-remaining-compute-nodes.html';
// A chapter index page, for the screenshot of contents links with level badges.
const INDEX_PAGE = 'module-1/cpu-memory/index.html';
const GROUPS = ['core', 'pages', 'levels', 'pdf'];
// A page one level down, for the footer and link-preview checks.
const NESTED_PAGE = 'module-1/cpu-memory/virtual-memory.html';

// `--only levels`, `--only core,pages`, `--only=levels`: the groups to run (default: all).
function chosenGroups(argv) {
    const chosen = [];
    for (let i = 0; i < argv.length; i++) {
        let value = null;
        if (argv[i] === '--only') {
            value = argv[++i];
        } else if (argv[i].startsWith('--only=')) {
            value = argv[i].slice('--only='.length);
        } else {
            console.error(`error: unknown argument ${argv[i]}; use --only ${GROUPS.join('|')}`);
            process.exit(2);
        }
        for (const name of (value || '').split(',').filter(Boolean)) {
            if (!GROUPS.includes(name)) {
                console.error(`error: unknown group "${name}"; the groups are ${GROUPS.join(', ')}`);
                process.exit(2);
            }
            chosen.push(name);
        }
    }
    return chosen.length ? chosen : null;
}
const explicitGroups = chosenGroups(process.argv.slice(2));

// ---- What the book says about itself (the root Cargo.toml and git) ----------------------

// The book's version ([workspace.metadata.book] version), its repository, the published
// site's address derived from it (as xtask/src/build_info.rs derives it), and the commit.
function projectFacts() {
    const manifest = fs.readFileSync(path.join(repo, 'Cargo.toml'), 'utf8');
    const section = name => {
        const start = manifest.indexOf(`[${name}]`);
        if (start < 0) {
            return '';
        }
        const rest = manifest.slice(start + name.length + 2);
        const next = rest.search(/^\[/m);
        return next < 0 ? rest : rest.slice(0, next);
    };
    const value = (text, key) => {
        const m = new RegExp(`^${key}\\s*=\\s*"([^"]*)"`, 'm').exec(text);
        return m ? m[1] : null;
    };
    const version = value(section('workspace.metadata.book'), 'version');
    const repository = (value(section('workspace.package'), 'repository') || '').replace(/\/$/, '');
    const m = /^https:\/\/github\.com\/([^/]+)\/([^/]+)$/.exec(repository);
    let commit = null;
    try {
        commit = execFileSync('git', ['-C', repo, 'rev-parse', 'HEAD']).toString().trim();
    } catch {
        commit = process.env.GITHUB_SHA || null;
    }
    return {
        version,
        repository,
        name: m ? m[2] : null,
        site: m ? `https://${m[1].toLowerCase()}.github.io/${m[2]}/` : null,
        commit,
    };
}
const facts = projectFacts();
const pdfFile = path.join(bookDir, `${facts.name}.pdf`);
const groups = explicitGroups || GROUPS.filter(g => g !== 'pdf' || fs.existsSync(pdfFile));
if (!explicitGroups && !groups.includes('pdf')) {
    console.log(`NOTE the pdf group does not run: no ${path.relative(process.cwd(), pdfFile)} (make it with \`cargo xtask pdf\`)`);
}
// The copy of book/ the server serves (set in main).
let snapshotDir = null;

// ---- A static file server for book/ ------------------------------------------------------

const MIME = {
    '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8',
    '.mjs': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8',
    '.json': 'application/json', '.svg': 'image/svg+xml', '.png': 'image/png',
    '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.gif': 'image/gif', '.ico': 'image/x-icon',
    '.woff': 'font/woff', '.woff2': 'font/woff2', '.ttf': 'font/ttf', '.otf': 'font/otf',
    '.eot': 'application/vnd.ms-fontobject', '.txt': 'text/plain; charset=utf-8',
};

function serve(dir) {
    const server = http.createServer((req, res) => {
        let rel;
        try {
            rel = decodeURIComponent(new URL(req.url, 'http://x').pathname);
        } catch {
            res.writeHead(400).end();
            return;
        }
        if (rel.endsWith('/')) {
            rel += 'index.html';
        }
        const file = path.join(dir, path.normalize(rel));
        if (!file.startsWith(dir + path.sep)) {
            res.writeHead(403).end();
            return;
        }
        fs.readFile(file, (err, data) => {
            if (err) {
                res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
                return;
            }
            res.writeHead(200, {
                'content-type': MIME[path.extname(file).toLowerCase()] || 'application/octet-stream',
                'cache-control': 'no-store',
            });
            res.end(data);
        });
    });
    return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => resolve(server));
    });
}

// ---- Checks -------------------------------------------------------------------------------

let passed = 0;
let failed = 0;

// A failed check whose whole message is worth printing (a list of problems); other errors
// (Playwright's, with their call logs) print only their first line.
class CheckFailure extends Error {}

async function check(name, fn) {
    try {
        const detail = await fn();
        passed++;
        console.log(`PASS ${name}${detail ? ` (${detail})` : ''}`);
    } catch (e) {
        failed++;
        const message = e instanceof CheckFailure ? e.message.replace(/\n/g, '\n    ')
            : e && e.message ? e.message.split('\n')[0] : String(e);
        console.log(`FAIL ${name}: ${message}`);
    }
}

function assert(cond, message) {
    if (!cond) {
        throw new CheckFailure(message);
    }
}

// Every page of the built book, as paths relative to its root ("module-1/x/index.html").
function bookPages(dir) {
    const skip = new Set(['404.html', 'print.html', 'toc.html']);
    const pages = [];
    const walk = (rel) => {
        for (const entry of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
            const child = rel ? `${rel}/${entry.name}` : entry.name;
            if (entry.isDirectory()) {
                // A book of its own inside book/ (a syllabus build, book/<name>/) is not part
                // of this one.
                if (!fs.existsSync(path.join(dir, child, 'toc.html'))) {
                    walk(child);
                }
            } else if (entry.name.endsWith('.html') && !skip.has(child)) {
                const text = fs.readFileSync(path.join(dir, child), 'utf8');
                // Only mdBook's pages (figures or other HTML copied from src/ are not).
                if (text.includes('id="mdbook-content"')) {
                    pages.push(child);
                }
            }
        }
    };
    walk('');
    return pages.sort();
}

// Relative luminance contrast (WCAG 2) between two CSS rgb()/rgba() colours.
function contrast(fg, bg) {
    const parse = c => (c.match(/[\d.]+/g) || []).map(Number);
    const lum = ([r, g, b]) => {
        const f = v => {
            v /= 255;
            return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
        };
        return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
    };
    const [a, b] = [lum(parse(fg)), lum(parse(bg))];
    return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
}

// ---- Every page: console, WGSL highlighting, the status box --------------------------------

async function pageChecks(page, open, errors) {
    const pages = bookPages(snapshotDir);
    const start = errors.length;
    await open(CHAPTER);
    await page.evaluate(() => localStorage.removeItem('galaxy-max-level'));
    const plainWgsl = [];
    let wgslBlocks = 0;
    for (const url of pages) {
        await open(url, { quick: true });
        const blocks = await page.evaluate(() => Array.from(
            document.querySelectorAll('main code.language-wgsl'),
            code => ({
                keywords: code.querySelectorAll('.hljs-keyword').length,
                first: code.textContent.trim().split('\n')[0].slice(0, 60),
                // A block of comments only has nothing else to colour.
                onlyComments: code.textContent.split('\n')
                    .every(line => line.trim() === '' || line.trim().startsWith('//')),
                comments: code.querySelectorAll('.hljs-comment').length,
            })));
        wgslBlocks += blocks.length;
        for (const block of blocks) {
            if (block.onlyComments ? block.comments === 0 : block.keywords === 0) {
                plainWgsl.push(`${url}: "${block.first}"`);
            }
        }
    }

    await check('no console warning or error on any page', async () => {
        const found = errors.slice(start);
        // The same message from the same page once, with its count.
        const counts = new Map();
        for (const e of found) {
            counts.set(e, (counts.get(e) || 0) + 1);
        }
        const lines = Array.from(counts, ([e, n]) => (n > 1 ? `${e} (${n} times)` : e));
        assert(found.length === 0, `${found.length} message(s):\n${lines.join('\n')}`);
        return `${pages.length} pages`;
    });

    await check('every WGSL block is highlighted', async () => {
        assert(wgslBlocks > 0, 'no ```wgsl block in the book');
        assert(plainWgsl.length === 0,
            `${plainWgsl.length} of ${wgslBlocks} WGSL blocks without highlighting:\n${plainWgsl.join('\n')}`);
        await open(WGSL_PAGE);
        const kinds = await page.evaluate(() => {
            const found = new Set();
            for (const span of document.querySelectorAll('main code.language-wgsl span[class^="hljs-"]')) {
                found.add(span.className.replace('hljs-', ''));
            }
            return Array.from(found).sort();
        });
        for (const kind of ['keyword', 'type', 'meta', 'built_in', 'number', 'comment']) {
            assert(kinds.includes(kind), `no .hljs-${kind} in the WGSL of ${WGSL_PAGE} (found: ${kinds.join(', ')})`);
        }
        const block = page.locator('main pre:has(code.language-wgsl)').first();
        await block.scrollIntoViewIfNeeded();
        await block.screenshot({ path: path.join(shotDir, 'wgsl-highlighted.png') });
        return `${wgslBlocks} blocks on ${pages.length} pages; classes: ${kinds.join(', ')}`;
    });

    await check('the entry page shows the status of every module', async () => {
        await open(INDEX_PAGE);
        await page.locator('#mdbook-sidebar').screenshot({ path: path.join(shotDir, 'sidebar.png') });
        await open(CHAPTER);
        const box = page.locator('main .book-status');
        assert(await box.count() === 1, `${CHAPTER} has ${await box.count()} .book-status boxes, not 1`);
        const items = await box.evaluate(el => Array.from(el.querySelectorAll('li[data-module]'), li => ({
            module: li.dataset.module,
            status: li.dataset.status,
            marker: getComputedStyle(li, '::before').width,
        })));
        assert(items.length > 0, 'the status box lists no module (li[data-module])');
        const unmarked = items.filter(i => !['complete', 'planned'].includes(i.status) || i.marker === 'auto' || i.marker === '0px');
        assert(unmarked.length === 0, `items without a status marker: ${unmarked.map(i => `module ${i.module} (${i.status})`).join(', ')}`);
        await box.scrollIntoViewIfNeeded();
        await box.screenshot({ path: path.join(shotDir, 'status-box.png') });
        return items.map(i => `${i.module}: ${i.status}`).join(', ');
    });
}

// ---- Footer, errata link, link previews (written by `cargo xtask build`) ------------------

async function footerChecks(page, open) {
    await check('each page\'s footer shows the version and the commit', async () => {
        assert(facts.version && facts.commit && facts.site,
            `cannot read the version (${facts.version}), the commit (${facts.commit}) or the site (${facts.site})`);
        const short = facts.commit.slice(0, 12);
        for (const url of [CHAPTER, NESTED_PAGE]) {
            await open(url);
            const footer = page.locator('#page-footer');
            assert(await footer.count() === 1, `${url}: ${await footer.count()} #page-footer elements, not 1`);
            assert(await footer.isVisible(), `${url}: the footer is not visible`);
            const shown = await footer.evaluate(el => ({
                insideMain: el.closest('main') !== null,
                version: (el.querySelector('.book-version') || {}).textContent,
                commit: (el.querySelector('.book-commit') || {}).textContent,
                commitLink: (el.querySelector('a.book-commit') || {}).href,
            }));
            assert(!shown.insideMain, `${url}: the footer is inside <main>, where the level filter and search see it`);
            assert(shown.version === facts.version, `${url}: the footer shows version "${shown.version}", Cargo.toml says ${facts.version}`);
            assert(shown.commit === short, `${url}: the footer shows commit "${shown.commit}", git says ${short}`);
            assert(shown.commitLink === `${facts.repository}/commit/${facts.commit}`,
                `${url}: the commit links to ${shown.commitLink}`);
        }
        // The footer is outside the text the level filter hides: it stays at level 1.
        await page.evaluate(() => localStorage.setItem('galaxy-max-level', '1'));
        await open(NESTED_PAGE);
        const visible = await page.locator('#page-footer').isVisible();
        await page.evaluate(() => localStorage.removeItem('galaxy-max-level'));
        assert(visible, `${NESTED_PAGE}: the footer is hidden at level 1`);
        await open(CHAPTER);
        const footer = page.locator('#page-footer');
        await footer.scrollIntoViewIfNeeded();
        await footer.screenshot({ path: path.join(shotDir, 'page-footer.png') });
        return `version ${facts.version}, commit ${short}`;
    });

    await check('"Report a problem with this page" opens a prefilled erratum naming the page', async () => {
        const form = fs.readFileSync(path.join(repo, '.github', 'ISSUE_TEMPLATE', 'erratum.yml'), 'utf8');
        const seen = [];
        for (const url of [CHAPTER, NESTED_PAGE]) {
            await open(url);
            const link = page.getByRole('link', { name: 'Report a problem with this page' });
            assert(await link.count() === 1, `${url}: ${await link.count()} errata links, not 1`);
            assert(await link.isVisible(), `${url}: the errata link is not visible`);
            const href = new URL(await link.getAttribute('href'));
            assert(`${href.origin}${href.pathname}` === `${facts.repository}/issues/new`,
                `${url}: the link leads to ${href.origin}${href.pathname}, not ${facts.repository}/issues/new`);
            const q = href.searchParams;
            const title = (await page.locator('main h1').first().textContent()).trim();
            const address = facts.site + url;
            assert(q.get('template') === 'erratum.yml', `${url}: template=${q.get('template')}`);
            assert(q.get('title') === `Erratum: ${title}`, `${url}: title=${q.get('title')}`);
            assert(q.get('page') === `${title} — ${address}`, `${url}: page=${q.get('page')}, expected "${title} — ${address}"`);
            assert((q.get('commit') || '').startsWith(facts.commit), `${url}: commit=${q.get('commit')}, git says ${facts.commit}`);
            assert((q.get('edition') || '').endsWith(` ${facts.version}`), `${url}: edition=${q.get('edition')}`);
            for (const field of ['page', 'edition', 'commit']) {
                assert(new RegExp(`id: ${field}\\b`).test(form), `the erratum form has no field "${field}" for the link to fill`);
            }
            seen.push(q.get('page'));
        }
        return seen.join('; ');
    });

    await check('each page has its own description for link previews, and sitemap.xml lists every page', async () => {
        const descriptions = new Set();
        for (const url of [CHAPTER, NESTED_PAGE]) {
            await open(url);
            const meta = await page.evaluate(() => {
                const get = sel => { const el = document.querySelector(sel); return el && el.getAttribute('content'); };
                const canonical = document.querySelector('link[rel="canonical"]');
                const first = document.querySelector('main > p');
                return {
                    description: get('meta[name="description"]'),
                    ogTitle: get('meta[property="og:title"]'),
                    ogDescription: get('meta[property="og:description"]'),
                    ogUrl: get('meta[property="og:url"]'),
                    canonical: canonical && canonical.getAttribute('href'),
                    title: document.querySelector('main h1').textContent.trim(),
                    firstParagraph: first ? first.textContent.replace(/\s+/g, ' ').trim() : '',
                };
            });
            assert(meta.ogTitle === meta.title, `${url}: og:title "${meta.ogTitle}", the page's title "${meta.title}"`);
            assert(meta.description && meta.firstParagraph.startsWith(meta.description.replace(/…$/, '')),
                `${url}: the description "${meta.description}" is not the start of the first paragraph`);
            assert(meta.ogDescription === meta.description, `${url}: og:description differs from the description`);
            assert(meta.ogUrl === facts.site + url && meta.canonical === meta.ogUrl,
                `${url}: og:url ${meta.ogUrl}, canonical ${meta.canonical}; expected ${facts.site + url}`);
            descriptions.add(meta.description);
        }
        assert(descriptions.size === 2, 'two pages share one description');
        const sitemap = fs.readFileSync(path.join(snapshotDir, 'sitemap.xml'), 'utf8');
        const listed = Array.from(sitemap.matchAll(/<loc>([^<]+)<\/loc>/g), m => m[1]);
        const expected = bookPages(snapshotDir).map(p => (p === 'index.html' ? facts.site : facts.site + p));
        const missing = expected.filter(address => !listed.includes(address));
        assert(missing.length === 0, `sitemap.xml leaves out ${missing.length} page(s): ${missing.slice(0, 5).join(', ')}`);
        assert(listed.length === expected.length, `sitemap.xml lists ${listed.length} addresses for ${expected.length} pages`);
        return `${listed.length} pages in sitemap.xml`;
    });
}

// ---- The PDF (from `cargo xtask pdf`) -----------------------------------------------------

function pdftotext(args) {
    return execFileSync('pdftotext', ['-enc', 'UTF-8', ...args, pdfFile, '-'], { maxBuffer: 1 << 30 }).toString('utf8');
}

async function pdfChecks() {
    await check('the PDF\'s title page names the version and commit the footers show', async () => {
        assert(fs.existsSync(pdfFile), `no ${pdfFile}: make it with \`cargo xtask pdf\``);
        const titlePage = pdftotext(['-f', '1', '-l', '1']).replace(/\s+/g, ' ');
        assert(titlePage.includes(`Version ${facts.version}`), `page 1 does not say "Version ${facts.version}": ${titlePage.slice(0, 200)}`);
        assert(titlePage.includes(facts.commit.slice(0, 12)), `page 1 does not name commit ${facts.commit.slice(0, 12)}: ${titlePage.slice(0, 200)}`);
        const pages = Number((/^Pages:\s+(\d+)/m.exec(execFileSync('pdfinfo', [pdfFile]).toString()) || [])[1]);
        assert(pages > 2, `pdfinfo counts ${pages} pages`);
        return `${pages} pages, ${(fs.statSync(pdfFile).size / 1048576).toFixed(1)} MiB`;
    });

    await check('screenshots of the PDF: title page, contents, the first page with a figure', async () => {
        // The first figure of the print page, found in the PDF by its first label.
        const print = fs.readFileSync(path.join(bookDir, 'print.html'), 'utf8');
        const src = (/<img src="([^"]+\.svg)"/.exec(print) || [])[1];
        assert(src, 'print.html shows no SVG figure');
        const svg = fs.readFileSync(path.join(bookDir, src), 'utf8');
        const label = ((/<text[^>]*>([^<]+)<\/text>/.exec(svg) || [])[1] || '').trim();
        const pages = pdftotext([]).split('\f');
        const figurePage = pages.findIndex(text => text.replace(/\s+/g, ' ').includes(label)) + 1;
        assert(label && figurePage > 0, `the label "${label}" of ${src} is on no page of the PDF`);
        for (const [number, name] of [[1, 'pdf-title-page'], [2, 'pdf-contents'], [figurePage, 'pdf-figure-page']]) {
            const file = path.join(shotDir, name);
            execFileSync('pdftoppm', ['-png', '-r', '80', '-f', String(number), '-l', String(number), '-singlefile', pdfFile, file]);
            assert(fs.statSync(`${file}.png`).size > 5000, `${file}.png is nearly empty`);
        }
        return `pages 1, 2 and ${figurePage} (${src})`;
    });
}

// ---- The level path -------------------------------------------------------------------------

// In the page: the level of the title and of every element with an id (the highest level of
// the sections that enclose it), whatever the filter shows.
function pageStructure() {
    const main = document.querySelector('#mdbook-content main') || document.querySelector('main');
    const levelOf = el => [1, 2, 3, 4, 5].find(n => el.classList.contains('level-' + n)) || null;
    const stack = [];
    const ids = {};
    let title = null;
    for (const child of Array.from(main.children)) {
        if (child.id === 'levels-notice') {
            continue;
        }
        const m = /^H([1-6])$/.exec(child.tagName);
        if (m) {
            const rank = Number(m[1]);
            while (stack.length && stack[stack.length - 1].rank >= rank) {
                stack.pop();
            }
            stack.push({ rank, level: levelOf(child) });
            if (rank === 1 && title === null) {
                title = { level: levelOf(child), text: child.textContent.trim() };
            }
        }
        const levels = stack.map(s => s.level).filter(l => l !== null);
        const level = levels.length ? Math.max(...levels) : null;
        for (const el of [child, ...child.querySelectorAll('[id]')]) {
            if (el.id) {
                ids[el.id] = level;
            }
        }
    }
    return { title, ids };
}

// In the page: every link in the text that the level filter leaves visible.
function visibleLinks() {
    const main = document.querySelector('#mdbook-content main') || document.querySelector('main');
    const out = [];
    for (const a of main.querySelectorAll('a[href]')) {
        if (a.closest('.level-hidden') || a.closest('#levels-notice')) {
            continue;
        }
        const url = new URL(a.href, location.href);
        if (url.origin !== location.origin) {
            continue;
        }
        const next = a.nextElementSibling;
        out.push({
            text: a.textContent.trim().replace(/\s+/g, ' '),
            pathname: url.pathname,
            hash: url.hash,
            // In a list item, or in the first cell of a table row (a table of contents).
            inContentsList: a.closest('li') !== null || a.closest('tr > td:first-child') !== null,
            badge: next && next.classList.contains('link-level') ? Number(next.dataset.level) : null,
        });
    }
    return out;
}

// A URL path on the test server as a page of the book ("module-1/x/index.html").
function pageOf(pathname) {
    let rel = decodeURIComponent(pathname).replace(/^\/+/, '');
    if (rel === '' || rel.endsWith('/')) {
        rel += 'index.html';
    }
    return rel;
}

async function levelChecks(page, open) {
    const pages = bookPages(snapshotDir);
    const structure = {};
    const links = { 1: {}, 2: {} };
    for (const max of [1, 2]) {
        await open(CHAPTER);
        await page.evaluate(n => localStorage.setItem('galaxy-max-level', String(n)), max);
        for (const url of pages) {
            await open(url, { quick: true });
            if (!structure[url]) {
                structure[url] = await page.evaluate(pageStructure);
            }
            links[max][url] = await page.evaluate(visibleLinks);
            if (url === INDEX_PAGE) {
                await page.locator('main').screenshot({ path: path.join(shotDir, `contents-badges-level-${max}.png`) });
                await page.locator('#mdbook-sidebar').screenshot({ path: path.join(shotDir, `sidebar-level-${max}.png`) });
            }
        }
    }
    await page.evaluate(() => localStorage.removeItem('galaxy-max-level'));

    for (const max of [1, 2]) {
        await check(`level path at level ${max}: visible links lead to visible text`, async () => {
            const problems = [];
            let checked = 0;
            let contents = 0;
            let namedHidden = 0;
            for (const url of pages) {
                for (const link of links[max][url]) {
                    const target = pageOf(link.pathname);
                    const info = structure[target];
                    if (!info || !info.title) {
                        continue; // not a page of the book (an image, a CSV file)
                    }
                    const id = link.hash ? decodeURIComponent(link.hash.slice(1)) : null;
                    if (id !== null && !(id in info.ids)) {
                        continue; // a missing fragment: `cargo xtask check` reports it
                    }
                    checked++;
                    const level = id === null ? info.title.level : info.ids[id];
                    const what = id === null
                        ? `chapter "${info.title.text}" (level ${level})`
                        : `${target === url ? '' : target}#${id} (level ${level})`;
                    // A link that names its target's level, "Synchronisation (level 3)".
                    const named = /\(level ([1-5])\)$/.exec(link.text);
                    if (named && Number(named[1]) !== level) {
                        problems.push(`${url}: "${link.text}" -> ${id === null ? target + ': ' : ''}${what}: `
                            + `the text names level ${named[1]}`);
                        continue;
                    }
                    if (level === null || level <= max) {
                        continue;
                    }
                    if (named) {
                        namedHidden++;
                        continue;
                    }
                    const isContents = /\/index\.html$/.test(url) && link.inContentsList
                        && id === null && target !== url;
                    if (isContents) {
                        contents++;
                        if (link.badge !== level) {
                            problems.push(`${url}: contents link "${link.text}" -> ${target}: ${what}, `
                                + (link.badge === null ? 'shows no level badge' : `badge says ${link.badge}`));
                        }
                        continue;
                    }
                    problems.push(`${url}: "${link.text}" -> ${id === null ? target + ': ' : ''}${what}`);
                }
            }
            assert(problems.length === 0,
                `${problems.length} visible link(s) lead to text hidden at level ${max} `
                + `(reword the link or raise the level of the section that holds it):\n${problems.join('\n')}`);
            return `${checked} links to book pages; to hidden text: ${contents} contents links, `
                + `each with its badge, and ${namedHidden} links that name the level`;
        });
    }
}

async function main() {
    if (!fs.existsSync(path.join(bookDir, CHAPTER))) {
        console.error(`error: ${path.join(bookDir, CHAPTER)} not found; build the book first: cargo xtask build`);
        process.exit(2);
    }
    if (!fs.existsSync(executablePath)) {
        console.error(`error: no Chromium at ${executablePath}; install the Debian package \`chromium\` or set CHROMIUM`);
        process.exit(2);
    }
    fs.mkdirSync(shotDir, { recursive: true });

    // Serve a snapshot, so a rebuild of book/ during the run (cargo xtask serve) cannot
    // swap fingerprinted files under the browser.
    const snapshot = fs.mkdtempSync(path.join(os.tmpdir(), 'book-check-'));
    snapshotDir = snapshot;
    fs.cpSync(bookDir, snapshot, { recursive: true });
    process.on('exit', () => fs.rmSync(snapshot, { recursive: true, force: true }));
    const server = await serve(snapshot);
    const base = `http://127.0.0.1:${server.address().port}/`;
    const browser = await chromium.launch({
        executablePath,
        headless: true,
        args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
            '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    try {
        const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
        // Pages with snippets that run on the Rust playground ask it which crates it offers
        // (mdBook's book.js fetches /meta/crates). The test runs without the internet, so it
        // answers for the playground: an empty list, which leaves std-only snippets runnable.
        await context.route('https://play.rust-lang.org/**', route => route.fulfill({
            status: 200,
            contentType: 'application/json',
            headers: { 'access-control-allow-origin': '*' },
            body: JSON.stringify({ crates: [] }),
        }));
        const page = await context.newPage();
        page.setDefaultTimeout(15000);

        // Console warnings, errors and uncaught exceptions, by page.
        const errors = [];
        page.on('console', msg => {
            if (msg.type() === 'error' || msg.type() === 'warning') {
                // A failed load names its URL only in the message's location.
                const where = msg.location() && msg.location().url;
                const source = where && /^Failed to load resource/.test(msg.text())
                    ? ` (${where.startsWith(base) ? where.slice(base.length) : where})` : '';
                errors.push(`${page.url().slice(base.length)}: console ${msg.type()}: ${msg.text()}${source}`);
            }
        });
        page.on('pageerror', err => errors.push(`${page.url().slice(base.length)}: uncaught: ${err.message}`));

        // `quick`: wait for the load event and for levels.js to finish its badges, instead of
        // a network-idle pause (the page-by-page groups open every page, some twice).
        const open = async (url, { quick = false } = {}) => {
            await page.goto(base + url, { waitUntil: 'load' });
            if (quick) {
                await page.waitForSelector('html[data-chapter-levels="ready"]',
                    { state: 'attached', timeout: 20000 });
            } else {
                await page.waitForLoadState('networkidle');
            }
        };
        const isVisible = (sel) => page.locator(sel).first().isVisible();

        if (groups.includes('core')) {
            // -- The chapter page with no saved choice.
            const errorsBefore = errors.length;
            await open(CHAPTER);

            await check('math is rendered by KaTeX', async () => {
                const n = await page.locator('main .katex').count();
                assert(n > 0, 'no .katex element in the chapter');
                const text = await page.locator('main').innerText();
                assert(!text.includes('$$'), 'raw $$ in the visible text');
                const errs = await page.locator('main .katex-error').count();
                assert(errs === 0, `${errs} .katex-error elements`);
                return `${n} formulas`;
            });

            await check('level control exists and is labelled', async () => {
                const select = page.locator('#mdbook-menu-bar #levels-select');
                assert(await select.count() === 1, 'no #levels-select in the menu bar');
                const label = await page.locator('label[for="levels-select"]').innerText();
                assert(/show up to/i.test(label), `label is "${label}"`);
                const options = await select.locator('option').allInnerTexts();
                assert(options.length === 6 && /all/.test(options[0]), `options: ${options.join(', ')}`);
                assert(await select.inputValue() === 'all', 'the default is not "all levels"');
            });

            await page.screenshot({ path: path.join(shotDir, 'chapter-all-levels.png'), fullPage: true });

            await check('level 1 hides the level-2 sections, and only those', async () => {
                assert(await isVisible('#setting-up'), '"Setting up" is not visible before choosing');
                await page.selectOption('#levels-select', '1');
                for (const id of ['setting-up', 'installing-rust-and-getting-the-code', 'gpu-adapters',
                    'running-your-first-example', 'measuring-against-a-floor']) {
                    assert(!await isVisible(`#${id}`), `#${id} still visible at level 1`);
                }
                for (const id of ['how-to-use-this-book', 'what-this-book-teaches',
                    'five-levels-one-book', 'how-each-chapter-is-organised', 'for-instructors']) {
                    assert(await isVisible(`#${id}`), `#${id} hidden at level 1`);
                }
                // The content of a hidden section goes too (its first code block).
                const code = page.locator('main pre', { hasText: 'rustup.rs' }).first();
                assert(!await code.isVisible(), 'the code under "Setting up" is still visible');
                // The sidebar's "on this page" links follow the filter.
                const link = page.locator('#mdbook-sidebar a.header-in-summary[href="#setting-up"]');
                if (await link.count()) {
                    assert(!await link.isVisible(), 'the sidebar still lists "Setting up"');
                }
            });

            await check('the choice survives a reload', async () => {
                await page.reload({ waitUntil: 'load' });
                assert(await page.locator('#levels-select').inputValue() === '1', 'select is not "1" after reload');
                assert(!await isVisible('#setting-up'), '"Setting up" visible after reload');
            });

            await page.screenshot({ path: path.join(shotDir, 'chapter-level-1.png'), fullPage: true });

            await check('a link into a hidden section says why, and can show it', async () => {
                await open(`${CHAPTER}#the-two-commands`);
                const notice = page.locator('#levels-notice');
                assert(await notice.isVisible(), 'no notice for a link into a hidden section');
                await notice.locator('button').click();
                assert(await isVisible('#the-two-commands'), 'the linked section is still hidden');
                assert(await page.locator('#levels-select').inputValue() === '2', 'the button did not choose level 2');
                await page.selectOption('#levels-select', '1');
            });

            await check('the print page shows every level', async () => {
                await open('print.html');
                assert(await isVisible('#setting-up') || await page.locator('main h2', { hasText: 'Setting up' }).first().isVisible(),
                    '"Setting up" hidden on print.html');
                // print.html would open the print dialog; headless ignores it.
            });

            await check('printing a chapter shows every level', async () => {
                await open(CHAPTER);
                await page.emulateMedia({ media: 'print' });
                const shown = await isVisible('#setting-up');
                await page.emulateMedia({ media: 'screen' });
                assert(shown, '"Setting up" hidden in @media print');
            });

            await check('"all levels" shows them again, after a reload too', async () => {
                await page.selectOption('#levels-select', 'all');
                assert(await isVisible('#setting-up'), '"Setting up" hidden after choosing all');
                await page.reload({ waitUntil: 'load' });
                assert(await page.locator('#levels-select').inputValue() === 'all', 'select is not "all" after reload');
                assert(await isVisible('#setting-up'), '"Setting up" hidden after reload');
            });

            await check('sidebar shows the chapter\'s entry level', async () => {
                // From print.html the badge comes from fetching the chapter page.
                await page.evaluate(() => Object.keys(localStorage).filter(k => k.startsWith('galaxy-chapter-levels')).forEach(k => localStorage.removeItem(k)));
                await open('print.html');
                const badge = page.locator(`#mdbook-sidebar a[href$="${CHAPTER}"] .chapter-level`).first();
                await badge.waitFor({ state: 'attached', timeout: 10000 });
                const text = (await badge.textContent()).trim();
                assert(/^1\b/.test(text), `badge reads "${text}"`);
                return `"${text.replace(/\s+/g, ' ')}"`;
            });

            await check('search finds "lavapipe"', async () => {
                await open(CHAPTER);
                await page.locator('main').click({ position: { x: 5, y: 5 } });
                await page.keyboard.press('s');
                const bar = page.locator('#mdbook-searchbar');
                await bar.waitFor({ state: 'visible' });
                // mdBook searches on keyup, so type the word key by key.
                await bar.pressSequentially('lavapipe', { delay: 20 });
                const hit = page.locator(`#mdbook-searchresults a[href*="${CHAPTER}"]`).first();
                await hit.waitFor({ state: 'visible', timeout: 10000 });
                const n = await page.locator('#mdbook-searchresults li').count();
                await page.keyboard.press('Escape');
                return `${n} results`;
            });

            await check('badges and the level control are readable in every theme', async () => {
                const worst = [];
                for (const theme of ['light', 'rust', 'coal', 'navy', 'ayu']) {
                    await page.evaluate(t => localStorage.setItem('mdbook-theme', t), theme);
                    await open(CHAPTER);
                    const colours = await page.evaluate(() => {
                        const out = [];
                        for (const n of [1, 2]) {
                            const h = document.querySelector(`main .level-${n}`);
                            const s = getComputedStyle(h, '::after');
                            out.push([`heading badge ${n}`, s.color, s.backgroundColor]);
                        }
                        const b = document.querySelector('#mdbook-sidebar .chapter-level');
                        if (b) {
                            const s = getComputedStyle(b);
                            out.push(['sidebar badge', s.color, s.backgroundColor]);
                        }
                        const sel = getComputedStyle(document.getElementById('levels-select'));
                        out.push(['level select', sel.color, sel.backgroundColor]);
                        return out;
                    });
                    for (const [what, fg, bg] of colours) {
                        const c = contrast(fg, bg);
                        worst.push(c);
                        assert(c >= 4.5, `${theme}: ${what} contrast ${c.toFixed(2)} (${fg} on ${bg})`);
                    }
                }
                await page.evaluate(() => localStorage.removeItem('mdbook-theme'));
                return `lowest contrast ${Math.min(...worst).toFixed(1)}:1`;
            });

            await check('no console errors or warnings on the chapter page', async () => {
                const mine = errors.slice(errorsBefore).filter(e => e.includes(CHAPTER));
                assert(mine.length === 0, mine.join(' | '));
            });

            await check('no console errors or warnings on the index page', async () => {
                const start = errors.length;
                await open('index.html');
                await page.selectOption('#levels-select', '1');
                await page.selectOption('#levels-select', 'all');
                await page.waitForTimeout(300);
                const mine = errors.slice(start);
                assert(mine.length === 0, mine.join(' | '));
            });

            await check('no console errors or warnings on the other pages opened', async () => {
                const other = errors.filter(e => !e.includes(CHAPTER) && !e.includes('index.html'));
                assert(other.length === 0, other.join(' | '));
            });
        }

        if (groups.includes('core')) {
            await footerChecks(page, open);
        }

        if (groups.includes('pages')) {
            await pageChecks(page, open, errors);
        }

        if (groups.includes('levels')) {
            await levelChecks(page, open);
        }

        if (groups.includes('pdf')) {
            await pdfChecks();
        }

        await context.close();
    } finally {
        await browser.close();
        server.close();
    }
    console.log(`screenshots: ${path.relative(process.cwd(), shotDir) || '.'}/`);
    console.log(`${passed} passed, ${failed} failed`);
    process.exit(failed ? 1 : 0);
}

main().catch(e => {
    console.error(`error: ${e && e.stack ? e.stack : e}`);
    process.exit(2);
});
