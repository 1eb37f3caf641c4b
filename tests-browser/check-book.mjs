// Checks the built book (book/, from `cargo xtask build`) in headless Chromium:
// rendered math, the level filter, search, sidebar level badges, readable colours in every
// theme, and no console errors. Serves book/ itself on 127.0.0.1 (a random free port).
//
//   cd tests-browser && npm ci && node check-book.mjs
//
// Environment: CHROMIUM (default /usr/bin/chromium), BOOK_DIR (default ../book),
// SCREENSHOT_DIR (default ../ci-artifacts/screenshots).
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..');
const bookDir = path.resolve(process.env.BOOK_DIR || path.join(repo, 'book'));
const shotDir = path.resolve(process.env.SCREENSHOT_DIR || path.join(repo, 'ci-artifacts', 'screenshots'));
const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
const CHAPTER = 'how-to-use-this-book.html';

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

async function check(name, fn) {
    try {
        const detail = await fn();
        passed++;
        console.log(`PASS ${name}${detail ? ` (${detail})` : ''}`);
    } catch (e) {
        failed++;
        console.log(`FAIL ${name}: ${e && e.message ? e.message.split('\n')[0] : e}`);
    }
}

function assert(cond, message) {
    if (!cond) {
        throw new Error(message);
    }
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
        const page = await context.newPage();
        page.setDefaultTimeout(15000);

        // Console errors and uncaught exceptions, by page.
        const errors = [];
        page.on('console', msg => {
            if (msg.type() === 'error') {
                errors.push(`${page.url()}: console error: ${msg.text()}`);
            }
        });
        page.on('pageerror', err => errors.push(`${page.url()}: uncaught: ${err.message}`));

        const open = async (url) => {
            await page.goto(base + url, { waitUntil: 'load' });
            await page.waitForLoadState('networkidle');
        };
        const isVisible = (sel) => page.locator(sel).first().isVisible();

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

        await check('no console errors on the chapter page', async () => {
            const mine = errors.slice(errorsBefore).filter(e => e.includes(CHAPTER));
            assert(mine.length === 0, mine.join(' | '));
        });

        await check('no console errors on the index page', async () => {
            const start = errors.length;
            await open('index.html');
            await page.selectOption('#levels-select', '1');
            await page.selectOption('#levels-select', 'all');
            await page.waitForTimeout(300);
            const mine = errors.slice(start);
            assert(mine.length === 0, mine.join(' | '));
        });

        await check('no console errors anywhere else', async () => {
            const other = errors.filter(e => !e.includes(CHAPTER) && !e.includes('index.html'));
            assert(other.length === 0, other.join(' | '));
        });

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
