// Prints a built book's print page (print.html, every chapter on one page) to PDF in
// headless Chromium, for `cargo xtask pdf` (xtask/src/pdf.rs), which checks the result.
//
//   node print-pdf.mjs --book ../book --output ../book/book.pdf --info '{"title": …}'
//
// --info is JSON: title, subtitle, version, commit (as the reader sees it), commitDate,
// siteAddress. The script
//
// - serves the book on 127.0.0.1 (a random free port) and opens print.html;
// - adds a title page (edition, version, commit) and a table of contents built from the
//   sidebar, with the page each chapter starts on;
// - checks that no code block, displayed formula or table is wider than the printed page,
//   since print cuts what a screen would scroll (theme/print.css wraps code);
// - prints twice: once to find the page each chapter starts on (pdftotext reads an
//   invisible marker at each chapter's title), then with those numbers in the contents.
//   The numbers take a fixed-width column, so the second print lays out like the first.
//
// It writes the PDF and prints one line: the chapters, the front matter's pages, the time.
// Environment: CHROMIUM (default /usr/bin/chromium).
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { chromium } from 'playwright-core';

const started = Date.now();
const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';

function parseArguments(argv) {
    const options = {};
    for (let i = 0; i < argv.length; i += 2) {
        const name = argv[i];
        if (!['--book', '--output', '--info'].includes(name) || i + 1 >= argv.length) {
            fail(`usage: node print-pdf.mjs --book DIR --output FILE.pdf --info JSON (got ${name})`);
        }
        options[name.slice(2)] = argv[i + 1];
    }
    for (const required of ['book', 'output', 'info']) {
        if (!options[required]) {
            fail(`missing --${required}`);
        }
    }
    try {
        options.info = JSON.parse(options.info);
    } catch (e) {
        fail(`--info is not JSON: ${e.message}`);
    }
    return options;
}

function fail(message) {
    console.error(`error: ${message}`);
    process.exit(2);
}

const MIME = {
    '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8',
    '.css': 'text/css; charset=utf-8', '.json': 'application/json', '.svg': 'image/svg+xml',
    '.png': 'image/png', '.jpg': 'image/jpeg', '.woff': 'font/woff', '.woff2': 'font/woff2',
    '.ttf': 'font/ttf', '.otf': 'font/otf',
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
                res.writeHead(404).end();
                return;
            }
            res.writeHead(200, { 'content-type': MIME[path.extname(file).toLowerCase()] || 'application/octet-stream' });
            res.end(data);
        });
    });
    return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => resolve(server));
    });
}

// In the page: the title page, the contents (page numbers "…" for now) and a marker at the
// start of each chapter. Returns the number of chapters, or an error message.
function addFrontMatter(info) {
    const main = document.querySelector('#mdbook-content main');
    if (!main) {
        return { error: 'print.html has no #mdbook-content main' };
    }
    // Chapters start at the top of <main> and after each page break mdBook puts between them.
    const starts = [main.firstElementChild];
    for (const br of main.querySelectorAll(':scope > div[style*="break-before"]')) {
        if (br.nextElementSibling) {
            starts.push(br.nextElementSibling);
        }
    }
    // The sidebar lists the same chapters in the same order (drafts have no link), with the
    // parts ("Module 1: …") between them.
    const entries = [];
    const sidebar = document.querySelector('#mdbook-sidebar ol.chapter');
    if (!sidebar) {
        return { error: 'print.html has no sidebar (#mdbook-sidebar ol.chapter)' };
    }
    for (const item of sidebar.querySelectorAll('li.part-title, li.chapter-item > .chapter-link-wrapper > a[href]')) {
        if (item.matches('li.part-title')) {
            entries.push({ part: true, title: item.textContent.trim() });
        } else {
            let depth = 0;
            for (let node = item.parentElement; node && node !== sidebar; node = node.parentElement) {
                if (node.matches('ol.section')) {
                    depth++;
                }
            }
            entries.push({ part: false, title: item.textContent.trim(), depth });
        }
    }
    const chapters = entries.filter(entry => !entry.part);
    if (chapters.length !== starts.length) {
        return { error: `the sidebar links ${chapters.length} chapters, but print.html holds ${starts.length}` };
    }

    const element = (tag, className, text) => {
        const node = document.createElement(tag);
        if (className) {
            node.className = className;
        }
        if (text !== undefined) {
            node.textContent = text;
        }
        return node;
    };

    const title = element('section', 'pdf-title-page');
    title.appendChild(element('h1', 'pdf-title', info.title));
    if (info.subtitle) {
        title.appendChild(element('p', 'pdf-subtitle', info.subtitle));
    }
    const build = element('p', 'pdf-build');
    for (const line of [`Version ${info.version}`, `Built from commit ${info.commit}${info.commitDate ? ` (${info.commitDate})` : ''}`, info.siteAddress]) {
        build.appendChild(element('span', null, line));
        build.appendChild(document.createElement('br'));
    }
    title.appendChild(build);

    const contents = element('nav', 'pdf-contents');
    contents.appendChild(element('h1', null, 'Contents'));
    const list = element('ol');
    let chapterIndex = 0;
    for (const entry of entries) {
        const item = element('li', entry.part ? 'pdf-part' : 'pdf-chapter');
        if (entry.part) {
            item.appendChild(element('span', 'pdf-entry-title', entry.title));
        } else {
            const start = starts[chapterIndex];
            if (!start.id) {
                start.id = `pdf-chapter-${chapterIndex}`;
            }
            item.style.paddingInlineStart = `${entry.depth * 1.4}em`;
            const link = element('a', 'pdf-entry-title', entry.title);
            link.href = `#${start.id}`;
            item.appendChild(link);
            item.appendChild(element('span', 'pdf-leader'));
            const number = element('span', 'pdf-page', '…');
            number.dataset.chapter = String(chapterIndex);
            item.appendChild(number);
            // An invisible marker that pdftotext finds on the chapter's first page; absolute,
            // so it takes no room.
            const marker = element('span', 'pdf-marker', `pdfchaptermarker${chapterIndex}x`);
            marker.style.cssText = 'position:absolute;font-size:2px;color:#fff;line-height:1;';
            start.insertBefore(marker, start.firstChild);
            chapterIndex++;
        }
        list.appendChild(item);
    }
    contents.appendChild(list);
    main.insertBefore(contents, main.firstChild);
    main.insertBefore(title, main.firstChild);
    return { chapters: chapterIndex };
}

// In the page, laid out for print: code blocks, displayed formulas and tables wider than the page.
function overflowingBlocks() {
    const wide = [];
    for (const el of document.querySelectorAll('main pre, main .katex-display, main .table-wrapper')) {
        if (el.scrollWidth > el.clientWidth + 1) {
            const text = el.textContent.trim().split('\n')[0].slice(0, 60);
            const kind = el.matches('pre') ? 'code' : el.matches('.table-wrapper') ? 'table' : 'formula';
            wide.push(`${kind} "${text}" is ${el.scrollWidth}px wide in ${el.clientWidth}px`);
        }
    }
    return wide;
}

async function main() {
    const options = parseArguments(process.argv.slice(2));
    const bookDir = path.resolve(options.book);
    if (!fs.existsSync(path.join(bookDir, 'print.html'))) {
        fail(`${path.join(bookDir, 'print.html')} not found: build the book first`);
    }
    if (!fs.existsSync(executablePath)) {
        fail(`no Chromium at ${executablePath}; install the Debian package \`chromium\` or set CHROMIUM`);
    }
    const server = await serve(bookDir);
    const browser = await chromium.launch({
        executablePath,
        headless: true,
        args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
            '--disable-component-update', '--disable-sync'],
    });
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'print-pdf-'));
    try {
        // A4 less the margins below is 178 mm wide: the width print lays the text out at.
        const page = await browser.newPage({ viewport: { width: 673, height: 900 } });
        page.setDefaultTimeout(60000);
        // mdBook's print.html calls window.print() 100 ms after it loads. Headless, that starts
        // a print job of its own, and page.pdf() below fails ("Page is already being printed")
        // when the two meet: the page must never print itself.
        await page.addInitScript(() => { window.print = () => {}; });
        await page.goto(`http://127.0.0.1:${server.address().port}/print.html`, { waitUntil: 'load' });
        await page.evaluate(() => document.fonts.ready);
        await page.emulateMedia({ media: 'print' });

        const added = await page.evaluate(addFrontMatter, options.info);
        if (added.error) {
            fail(added.error);
        }
        const wide = await page.evaluate(overflowingBlocks);
        if (wide.length) {
            console.error(`error: ${wide.length} block(s) wider than the printed page (they would be cut):\n  ${wide.join('\n  ')}`);
            process.exit(1);
        }

        const footer = `<div style="font-size:8px;width:100%;padding:0 16mm;display:flex;justify-content:space-between;color:#555;font-family:sans-serif">`
            + `<span>${escapeHtml(options.info.title)}, version ${escapeHtml(options.info.version)}</span>`
            + `<span><span class="pageNumber"></span> / <span class="totalPages"></span></span></div>`;
        const pdfOptions = {
            format: 'A4',
            printBackground: true,
            outline: true,
            tagged: true,
            displayHeaderFooter: true,
            headerTemplate: '<span></span>',
            footerTemplate: footer,
            margin: { top: '16mm', bottom: '18mm', left: '16mm', right: '16mm' },
        };

        // First print: where does each chapter start?
        const draft = path.join(scratch, 'draft.pdf');
        await page.pdf({ ...pdfOptions, path: draft });
        const pages = execFileSync('pdftotext', ['-enc', 'UTF-8', draft, '-'], { maxBuffer: 1 << 30 })
            .toString('utf8').split('\f');
        const startPages = [];
        for (let chapter = 0; chapter < added.chapters; chapter++) {
            const marker = `pdfchaptermarker${chapter}x`;
            const index = pages.findIndex(text => text.includes(marker));
            if (index < 0) {
                fail(`the marker of chapter ${chapter} is not in the first print`);
            }
            startPages.push(index + 1);
        }

        // Second print, with the page numbers, without the markers.
        await page.evaluate(numbers => {
            for (const span of document.querySelectorAll('.pdf-contents .pdf-page')) {
                span.textContent = String(numbers[Number(span.dataset.chapter)]);
            }
            for (const marker of document.querySelectorAll('.pdf-marker')) {
                marker.remove();
            }
        }, startPages);
        await page.pdf({ ...pdfOptions, path: path.resolve(options.output) });
        const seconds = (Date.now() - started) / 1000;
        console.log(`Printed ${added.chapters} chapters; the title page and the contents take `
            + `pages 1 to ${startPages[0] - 1}; ${seconds.toFixed(1)} s in the browser.`);
    } finally {
        fs.rmSync(scratch, { recursive: true, force: true });
        await browser.close();
        server.close();
    }
}

function escapeHtml(text) {
    return String(text).replace(/[&<>"']/g, c => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
}

main().catch(e => {
    console.error(`error: ${e && e.stack ? e.stack : e}`);
    process.exit(2);
});
