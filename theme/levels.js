// Difficulty levels: a "Show up to level N" filter, and each chapter's entry level in the
// sidebar. Every heading in src/ carries a class .level-1 … .level-5 (see theme/levels.css).
//
// - The filter hides every section whose heading level is above N. A section is its heading
//   and everything after it up to the next heading of the same or higher rank, so a hidden
//   h2 also hides the h3s under it. The choice is kept in localStorage ('galaxy-max-level');
//   theme/head.hbs reads it in <head> and hides <main> until this script has applied it.
// - The print page (print.html) and printing (@media print, theme/levels.css) always show
//   everything.
// - Sidebar badges: the level of a chapter is its title's class, which only its own page
//   has. This script fetches each chapter page linked from the sidebar (same origin, only the
//   first few kilobytes: the download stops at the title) and caches the answers in
//   localStorage, keyed by this build's fingerprinted file names, so each build fetches each
//   page once. Opened from file://, where fetch is not allowed, only the current page's own
//   badge is shown.
// - Contents badges: a chapter's index page may list chapters above the chosen level (its
//   list of contents). Such a link gets the same badge after it, so the reader knows the
//   chapter it leads to is hidden at this level. The rule (tests-browser/check-book.mjs
//   applies the same one): on a chapter's index page (a page named index.html in a
//   directory, e.g. module-1/cpu-memory/index.html), a link inside a list item (`li a`) or
//   in the first cell of a table row (`tr > td:first-child a`) that leads to a whole chapter
//   of this book (no #fragment) is a contents link. Every other
//   visible link must lead to text that is visible at the chosen level.
(function () {
    'use strict';

    const STORAGE_KEY = 'galaxy-max-level';
    const CACHE_KEY = 'galaxy-chapter-levels';
    const LEVELS = [1, 2, 3, 4, 5];
    const root = document.documentElement;
    // mdBook marks the print page (print.html) noindex.
    const isPrintPage = /\/print(\.html)?$/.test(location.pathname)
        || document.querySelector('meta[name="robots"][content="noindex"]') !== null;

    function levelOf(el) {
        for (const n of LEVELS) {
            if (el.classList.contains('level-' + n)) {
                return n;
            }
        }
        return null;
    }

    function readChoice() {
        try {
            const v = localStorage.getItem(STORAGE_KEY);
            return v && /^[1-5]$/.test(v) ? Number(v) : null;
        } catch (e) {
            return null;
        }
    }

    function saveChoice(n) {
        try {
            if (n === null) {
                localStorage.removeItem(STORAGE_KEY);
            } else {
                localStorage.setItem(STORAGE_KEY, String(n));
            }
        } catch (e) { /* private mode: the choice lasts for this page only */ }
    }

    // ---- The filter ------------------------------------------------------------------------

    const main = document.querySelector('#mdbook-content main') || document.querySelector('main');

    // Hides (or shows) every child of <main> according to the levels of the sections that
    // enclose it, and mirrors that on the sidebar's "on this page" links.
    function applyFilter(max) {
        if (!main) {
            root.classList.remove('levels-pending');
            return;
        }
        if (max === null) {
            root.removeAttribute('data-max-level');
        } else {
            root.setAttribute('data-max-level', String(max));
        }
        const stack = []; // {rank, level} of the enclosing headings
        const hiddenIds = new Set();
        let titleHidden = false;
        for (const el of Array.from(main.children)) {
            if (el.id === 'levels-notice') {
                continue;
            }
            const m = /^H([1-6])$/.exec(el.tagName);
            if (m) {
                const rank = Number(m[1]);
                while (stack.length && stack[stack.length - 1].rank >= rank) {
                    stack.pop();
                }
                stack.push({ rank, level: levelOf(el) });
            }
            const hidden = max !== null
                && stack.some(s => s.level !== null && s.level > max);
            el.classList.toggle('level-hidden', hidden);
            if (m && hidden) {
                if (el.id) {
                    hiddenIds.add(el.id);
                }
                if (m[1] === '1') {
                    titleHidden = true;
                }
            }
        }
        updateSidebarSections(hiddenIds);
        updateNotice(max, titleHidden);
        root.classList.remove('levels-pending');
    }

    // The highest level among the sections that enclose `el` (a child of <main> or inside one).
    function sectionLevel(el) {
        while (el && el.parentElement !== main) {
            el = el.parentElement;
        }
        if (!el) {
            return null;
        }
        const stack = [];
        for (const child of Array.from(main.children)) {
            const m = /^H([1-6])$/.exec(child.tagName);
            if (m) {
                const rank = Number(m[1]);
                while (stack.length && stack[stack.length - 1].rank >= rank) {
                    stack.pop();
                }
                stack.push({ rank, level: levelOf(child) });
            }
            if (child === el) {
                break;
            }
        }
        const levels = stack.map(s => s.level).filter(l => l !== null);
        return levels.length ? Math.max(...levels) : null;
    }

    // Says why the text is missing, with a button that shows it: when the chapter's title is
    // above the chosen level, or when the link followed (#fragment, e.g. from search) points
    // into a hidden section.
    function updateNotice(max, titleHidden) {
        let notice = document.getElementById('levels-notice');
        let what = null;
        let level = null;
        const target = location.hash.length > 1
            ? document.getElementById(decodeURIComponent(location.hash.slice(1))) : null;
        if (titleHidden) {
            const h1 = main.querySelector('h1');
            what = h1 ? h1.textContent : document.title;
            level = h1 ? levelOf(h1) : null;
            what += ' starts at level ' + level;
        } else if (max !== null && target && main.contains(target) && target.closest('.level-hidden')) {
            level = sectionLevel(target);
            what = target.textContent.trim();
            what = (/^H[1-6]$/.test(target.tagName) ? '“' + what + '”' : 'The linked text')
                + ' is at level ' + level;
        }
        if (what === null) {
            if (notice) {
                notice.remove();
            }
            return;
        }
        if (!notice) {
            notice = document.createElement('div');
            notice.id = 'levels-notice';
            notice.className = 'levels-notice';
            notice.setAttribute('role', 'note');
            main.prepend(notice);
        }
        notice.textContent = '';
        const p = document.createElement('p');
        p.append(what + '; you chose to show up to level ' + max + '. ');
        const button = document.createElement('button');
        button.type = 'button';
        button.textContent = level ? 'Show up to level ' + level : 'Show all levels';
        button.addEventListener('click', () => {
            choose(level);
            if (target && !titleHidden) {
                target.scrollIntoView();
            }
        });
        p.append(button);
        notice.append(p);
        if (!titleHidden) {
            notice.scrollIntoView({ block: 'nearest' });
        }
    }

    // mdBook 0.5 lists the page's headings under the current chapter in the sidebar
    // (div.on-this-page, links a.header-in-summary), built by toc.js on DOMContentLoaded.
    function updateSidebarSections(hiddenIds) {
        for (const a of document.querySelectorAll('#mdbook-sidebar a.header-in-summary')) {
            const href = a.getAttribute('href') || '';
            const id = href.startsWith('#') ? decodeURIComponent(href.slice(1)) : null;
            const li = a.closest('li') || a;
            li.classList.toggle('level-hidden', id !== null && hiddenIds.has(id));
        }
        fixCurrentHeader();
    }

    // toc.js marks the heading being read as .current-header; a hidden heading has no
    // position, so it may win. Move the mark to the nearest visible heading before it.
    function fixCurrentHeader() {
        const current = document.querySelector('#mdbook-sidebar a.current-header');
        if (!current || !current.closest('.level-hidden')) {
            return;
        }
        const links = Array.from(document.querySelectorAll('#mdbook-sidebar a.header-in-summary'));
        for (let i = links.indexOf(current) - 1; i >= 0; i--) {
            if (!links[i].closest('.level-hidden')) {
                current.classList.remove('current-header');
                links[i].classList.add('current-header');
                return;
            }
        }
    }

    // ---- The control -----------------------------------------------------------------------

    let select = null;

    function choose(max) {
        saveChoice(max);
        if (select) {
            select.value = max === null ? 'all' : String(max);
        }
        applyFilter(max);
        updateSidebarDimming();
        updateContentsBadges();
    }

    function addControl() {
        const bar = document.querySelector('#mdbook-menu-bar .right-buttons')
            || document.querySelector('.menu-bar .right-buttons');
        if (!bar || document.getElementById('levels-select')) {
            return;
        }
        const wrapper = document.createElement('div');
        wrapper.className = 'levels-control';
        const label = document.createElement('label');
        label.htmlFor = 'levels-select';
        label.className = 'levels-label';
        label.textContent = 'Show up to';
        select = document.createElement('select');
        select.id = 'levels-select';
        select.title = 'Show sections up to this difficulty level';
        const all = new Option('all levels', 'all');
        select.add(all);
        for (const n of LEVELS) {
            select.add(new Option('level ' + n, String(n)));
        }
        const current = readChoice();
        select.value = current === null ? 'all' : String(current);
        select.addEventListener('change', () => {
            choose(select.value === 'all' ? null : Number(select.value));
        });
        // mdBook's keyboard shortcuts (s, arrows) must not fire while the select has focus.
        select.addEventListener('keydown', e => e.stopPropagation());
        wrapper.append(label, select);
        bar.prepend(wrapper);
    }

    // ---- Sidebar chapter badges --------------------------------------------------------------

    // An identifier of this build: the fingerprinted names of the search index and the TOC.
    function buildId() {
        const toc = document.querySelector('script[src*="toc"]');
        return String(window.path_to_searchindex_js || '') + '|' + (toc ? toc.getAttribute('src') : '');
    }

    // One cache per book root, so books served side by side (syllabi) keep their own.
    function cacheKey() {
        const base = new URL(typeof path_to_root === 'string' ? path_to_root || './' : './',
            location.href);
        return CACHE_KEY + ':' + base.pathname;
    }

    function loadCache() {
        try {
            const c = JSON.parse(localStorage.getItem(cacheKey()) || 'null');
            if (c && c.build === buildId() && c.levels && typeof c.levels === 'object') {
                return c.levels;
            }
        } catch (e) { /* ignore a broken cache */ }
        return {};
    }

    let cache = {};

    function saveCache() {
        try {
            localStorage.setItem(cacheKey(), JSON.stringify({ build: buildId(), levels: cache }));
        } catch (e) { /* quota or private mode: badges are fetched again next time */ }
    }

    // The chapter's path relative to the book root, e.g. "module-1/graphs.html".
    function chapterKey(a) {
        return bookPath(a.href);
    }

    // A URL's path relative to the book root; a directory means its index.html.
    function bookPath(href) {
        const url = new URL(href, location.href);
        const base = new URL(typeof path_to_root === 'string' ? path_to_root || './' : './',
            location.href);
        let path = url.pathname;
        if (path.startsWith(base.pathname)) {
            path = path.slice(base.pathname.length);
        }
        if (path === '' || path.endsWith('/')) {
            path += 'index.html';
        }
        return path;
    }

    function chapterLinks() {
        return Array.from(document.querySelectorAll('#mdbook-sidebar a[href]'))
            .filter(a => !a.classList.contains('header-in-summary')
                && !a.classList.contains('chapter-fold-toggle')
                && !(a.getAttribute('href') || '').startsWith('#')
                && new URL(a.href, location.href).origin === location.origin
                && a.closest('.on-this-page') === null);
    }

    function setBadge(a, level) {
        if (a.querySelector('.chapter-level')) {
            return;
        }
        const badge = document.createElement('span');
        badge.className = 'chapter-level chapter-level-' + level;
        badge.title = 'Entry level ' + level;
        const visible = document.createElement('span');
        visible.setAttribute('aria-hidden', 'true');
        visible.textContent = String(level);
        const spoken = document.createElement('span');
        spoken.className = 'levels-sr-only';
        spoken.textContent = ' (entry level ' + level + ')';
        badge.append(visible, spoken);
        a.append(badge);
        a.dataset.chapterLevel = String(level);
        updateSidebarDimming();
    }

    // The links of this page's list of contents (see the rule at the top of this file).
    function contentsLinks() {
        const here = bookPath(location.href);
        if (!main || !/\/index\.html$/.test(here)) {
            return [];
        }
        return Array.from(main.querySelectorAll('li a[href], tr > td:first-child a[href]')).filter(a => {
            const url = new URL(a.href, location.href);
            const path = bookPath(a.href);
            return url.origin === location.origin && url.hash === ''
                && /\.html$/.test(path) && path !== here;
        });
    }

    // A level badge after each contents link whose chapter starts above the chosen level.
    function updateContentsBadges() {
        const max = readChoice();
        for (const a of contentsLinks()) {
            const level = cache[bookPath(a.href)];
            const next = a.nextElementSibling;
            const old = next && next.classList.contains('link-level') ? next : null;
            const wanted = max !== null && typeof level === 'number' && level > max;
            if (old && (!wanted || old.dataset.level !== String(level))) {
                old.remove();
            }
            if (wanted && !(old && old.isConnected)) {
                const badge = document.createElement('span');
                badge.className = 'chapter-level link-level chapter-level-' + level;
                badge.dataset.level = String(level);
                badge.title = 'This chapter starts at level ' + level
                    + ', above the level you chose';
                const visible = document.createElement('span');
                visible.setAttribute('aria-hidden', 'true');
                visible.textContent = String(level);
                const spoken = document.createElement('span');
                spoken.className = 'levels-sr-only';
                spoken.textContent = ' (level ' + level + ', hidden at your level)';
                badge.append(visible, spoken);
                a.after(badge);
            }
        }
    }

    // Chapters that start above the chosen level are dimmed in the sidebar.
    function updateSidebarDimming() {
        const max = readChoice();
        for (const a of document.querySelectorAll('#mdbook-sidebar a[data-chapter-level]')) {
            a.classList.toggle('chapter-above-level',
                max !== null && Number(a.dataset.chapterLevel) > max);
        }
    }

    // Reads a page until its first <h1 …> tag and returns the level in its class, stopping
    // the download there.
    async function fetchLevel(url) {
        const controller = new AbortController();
        const response = await fetch(url, { signal: controller.signal, credentials: 'same-origin' });
        if (!response.ok || !response.body) {
            return null;
        }
        const reader = response.body.getReader();
        const decoder = new TextDecoder();
        let text = '';
        try {
            for (;;) {
                const { done, value } = await reader.read();
                if (done) {
                    break;
                }
                text += decoder.decode(value, { stream: true });
                // The menu bar's <h1 class="menu-title"> comes first; skip it.
                const re = /<h1\b([^>]*)>/g;
                let m;
                while ((m = re.exec(text)) !== null) {
                    if (/menu-title/.test(m[1])) {
                        continue;
                    }
                    const lv = /class="[^"]*\blevel-([1-5])\b/.exec(m[1]);
                    return lv ? Number(lv[1]) : null;
                }
                if (text.length > 2000000) {
                    break;
                }
            }
        } finally {
            controller.abort();
        }
        return null;
    }

    async function addChapterBadges() {
        const links = chapterLinks();
        cache = loadCache();
        // The current page needs no fetch.
        const h1 = main && !isPrintPage ? main.querySelector('h1') : null;
        const active = document.querySelector('#mdbook-sidebar a.active');
        if (h1 && active && levelOf(h1) !== null) {
            cache[chapterKey(active)] = levelOf(h1);
        }
        const todo = [];
        for (const a of links) {
            const key = chapterKey(a);
            if (Object.prototype.hasOwnProperty.call(cache, key)) {
                if (cache[key] !== null) {
                    setBadge(a, cache[key]);
                }
            } else {
                todo.push(a);
            }
        }
        saveCache();
        // fetch() does not work on file:// pages; show only what is known.
        if (!/^https?:$/.test(location.protocol) || typeof fetch !== 'function'
            || typeof AbortController !== 'function' || todo.length === 0) {
            return;
        }
        // A few requests at a time, in sidebar order.
        let next = 0;
        async function worker() {
            while (next < todo.length) {
                const a = todo[next++];
                const key = chapterKey(a);
                let level = null;
                try {
                    level = await fetchLevel(a.href);
                } catch (e) {
                    level = undefined; // network error: try again on a later page
                }
                if (level !== undefined) {
                    cache[key] = level;
                }
                if (level) {
                    for (const same of links) {
                        if (chapterKey(same) === key) {
                            setBadge(same, level);
                        }
                    }
                }
            }
        }
        await Promise.all([worker(), worker(), worker(), worker()]);
        saveCache();
    }

    // ---- Start -------------------------------------------------------------------------------

    if (isPrintPage) {
        root.removeAttribute('data-max-level');
        root.classList.remove('levels-pending');
    } else {
        addControl();
        applyFilter(readChoice());
        // The sidebar's "on this page" links appear on DOMContentLoaded (toc.js); filter them
        // too, and keep toc.js from marking a hidden heading as the current one.
        const again = () => applyFilter(readChoice());
        if (document.readyState === 'loading') {
            document.addEventListener('DOMContentLoaded', again);
        } else {
            again();
        }
        document.addEventListener('scroll', fixCurrentHeader, { passive: true });
        // A link into a hidden section (search results, other chapters) gets a notice.
        window.addEventListener('hashchange', () => applyFilter(readChoice()));
        // Another tab changed the choice.
        window.addEventListener('storage', e => {
            if (e.key === STORAGE_KEY) {
                const n = readChoice();
                if (select) {
                    select.value = n === null ? 'all' : String(n);
                }
                applyFilter(n);
                updateSidebarDimming();
                updateContentsBadges();
            }
        });
    }

    // When the badges are done, <html data-chapter-levels="ready"> tells the browser test.
    const startBadges = () => {
        addChapterBadges()
            .catch(() => { /* badges are a convenience; never break the page */ })
            .then(() => {
                if (!isPrintPage) {
                    updateContentsBadges();
                }
                root.dataset.chapterLevels = 'ready';
            });
    };
    if (document.readyState === 'complete') {
        startBadges();
    } else {
        window.addEventListener('load', startBadges);
    }
})();
