// Profiles the book's level filter the way the browser's performance panel does: records a
// Chrome trace (the DevTools timeline categories, over the DevTools protocol) in headless
// Chromium while the "show up to level" menu is switched on one long page, then splits each
// switch's time on the page's main thread into scripting, style, layout, paint and other,
// and counts the long tasks (over 50 ms, the threshold the panel marks in red).
//
//   cd tests-browser && npm ci && node profile-level-filter.mjs [--out DIR] [--throttle 4]
//
// Needs the built book (book/, from `cargo xtask build`). Writes into DIR (default
// ../figures/data/profiling):
//   browser-level-filter<-throttle-N>.csv  one row per switch, times in milliseconds.
// The trace itself is large and is not kept; --keep-trace FILE writes it (load it into the
// Performance panel or https://ui.perfetto.dev).
//
// --throttle N slows the page's CPU N times (the protocol's Emulation.setCPUThrottlingRate,
// the panel's "CPU: N× slowdown"), to see the page as a slower phone would run it.
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..');
const bookDir = path.resolve(process.env.BOOK_DIR || path.join(repo, 'book'));
const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
// The longest page of the book: the filter's work grows with the number of elements.
const PAGE = 'module-1/building-a-graph/building-the-graph.html';
// Level choices in the order they are switched to, five rounds.
const SEQUENCE = ['1', '2', '3', '4', 'all'];
const ROUNDS = 5;
const LONG_TASK_MS = 50;

function option(name, fallback) {
    const index = process.argv.indexOf(name);
    return index >= 0 && index + 1 < process.argv.length ? process.argv[index + 1] : fallback;
}

const outDir = path.resolve(option('--out', path.join(repo, 'figures', 'data', 'profiling')));
const throttle = Number(option('--throttle', '1'));
const keepTrace = option('--keep-trace', null);

const MIME = {
    '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css',
    '.svg': 'image/svg+xml', '.png': 'image/png', '.json': 'application/json',
    '.woff2': 'font/woff2', '.woff': 'font/woff', '.ttf': 'font/ttf',
};

function serve(dir) {
    const server = http.createServer((req, res) => {
        let rel = decodeURIComponent(new URL(req.url, 'http://x').pathname);
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
                res.writeHead(404).end('not found');
                return;
            }
            res.writeHead(200, { 'content-type': MIME[path.extname(file)] || 'application/octet-stream' });
            res.end(data);
        });
    });
    return new Promise(resolve => server.listen(0, '127.0.0.1', () => resolve(server)));
}

// What the performance panel's summary calls each trace event (its own time only).
function category(name) {
    if (/^(EventDispatch|FunctionCall|EvaluateScript|TimerFire|FireAnimationFrame|RunMicrotasks|v8\.|V8\.|MajorGC|MinorGC|GCEvent|CompileScript|v8\.compile)/.test(name)) {
        return 'scripting';
    }
    if (/^(UpdateLayoutTree|RecalculateStyles|ParseAuthorStyleSheet|ScheduleStyleRecalculation)/.test(name)) {
        return 'style';
    }
    if (/^(Layout|UpdateLayer|InvalidateLayout|IntersectionObserverController)/.test(name)) {
        return 'layout';
    }
    if (/^(Paint|PrePaint|Layerize|Commit|CompositeLayers|PaintImage|UpdateLayerTree|Decode)/.test(name)) {
        return 'paint';
    }
    return 'other';
}

// Self time per category, and the long tasks, of the main-thread events inside [start, end].
function summarise(events, mainThread, start, end) {
    const inside = events
        .filter(e => e.ph === 'X' && e.pid === mainThread.pid && e.tid === mainThread.tid
            && e.ts >= start && e.ts + (e.dur || 0) <= end)
        .sort((a, b) => a.ts - b.ts || b.dur - a.dur);
    const totals = { scripting: 0, style: 0, layout: 0, paint: 0, other: 0 };
    const stack = [];
    const self = new Map();
    let taskMs = 0;
    let longTasks = 0;
    for (const e of inside) {
        while (stack.length && stack[stack.length - 1].ts + stack[stack.length - 1].dur <= e.ts) {
            stack.pop();
        }
        if (stack.length) {
            const parent = stack[stack.length - 1];
            self.set(parent, self.get(parent) - e.dur);
        } else if (/RunTask$/.test(e.name)) {
            taskMs += e.dur / 1000;
            if (e.dur / 1000 > LONG_TASK_MS) {
                longTasks += 1;
            }
        }
        self.set(e, e.dur);
        stack.push(e);
    }
    for (const [e, micros] of self) {
        totals[category(e.name)] += Math.max(0, micros) / 1000;
    }
    return { taskMs, longTasks, totals };
}

const server = await serve(bookDir);
const port = server.address().port;
const browser = await chromium.launch({
    executablePath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
});
try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`http://127.0.0.1:${port}/${PAGE}`, { waitUntil: 'load' });
    await page.waitForSelector('#levels-select');
    const elements = await page.evaluate(() => document.querySelectorAll('main *').length);
    if (throttle > 1) {
        const session = await page.context().newCDPSession(page);
        await session.send('Emulation.setCPUThrottlingRate', { rate: throttle });
    }
    await browser.startTracing(page, {
        categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline',
            'disabled-by-default-devtools.timeline.frame', 'toplevel', 'blink.user_timing',
            'v8.execute', 'latencyInfo'],
    });
    const switches = [];
    let previous = await page.inputValue('#levels-select');
    for (let round = 0; round < ROUNDS; round++) {
        for (const level of SEQUENCE) {
            // Inside the page, as a reader's choice would: set the menu, fire its change
            // event, and wait for the second frame after it. The mark pair brackets that.
            const handlerMs = await page.evaluate(value => new Promise(resolve => {
                const select = document.querySelector('#levels-select');
                performance.mark('switch-start');
                const before = performance.now();
                select.value = value;
                select.dispatchEvent(new Event('change', { bubbles: true }));
                const handler = performance.now() - before;
                requestAnimationFrame(() => requestAnimationFrame(() => {
                    performance.mark('switch-end');
                    resolve(handler);
                }));
            }), level);
            switches.push({ round: round + 1, from: previous, to: level, handlerMs });
            previous = level;
        }
    }
    const trace = JSON.parse((await browser.stopTracing()).toString());
    if (keepTrace) {
        fs.writeFileSync(keepTrace, JSON.stringify(trace));
    }
    const events = trace.traceEvents || trace;
    const threadNames = events.filter(e => e.ph === 'M' && e.name === 'thread_name'
        && e.args && e.args.name === 'CrRendererMain');
    const marks = name => events.filter(e => e.name === name && e.cat.includes('blink.user_timing'))
        .sort((a, b) => a.ts - b.ts);
    const starts = marks('switch-start');
    const ends = marks('switch-end');
    if (starts.length !== switches.length || ends.length !== switches.length) {
        throw new Error(`found ${starts.length} start and ${ends.length} end marks for ${switches.length} switches`);
    }
    // The renderer main thread that recorded the marks is the page's.
    const mainThread = threadNames.find(t => t.pid === starts[0].pid) || starts[0];
    const chromeVersion = browser.version();
    const cpu = (os.cpus()[0] || { model: 'unknown CPU' }).model.trim();
    const date = new Date().toISOString().slice(0, 10);
    const suffix = throttle > 1 ? `-throttle-${throttle}` : '';
    const lines = [
        `# title: Switching the level filter on ${PAGE} (${elements} elements in <main>)`,
        `# hardware: ${cpu}, ${os.cpus().length} cores; headless Chromium ${chromeVersion}`
            + (throttle > 1 ? `, CPU throttled ${throttle}x` : ''),
        `# command: cd tests-browser && node profile-level-filter.mjs${throttle > 1 ? ` --throttle ${throttle}` : ''}`,
        `# date: ${date}`,
        '# milliseconds of the page\'s main thread between the switch and the second animation frame after it',
        'round,from,to,wall_ms,handler_ms,task_ms,scripting_ms,style_ms,layout_ms,paint_ms,other_ms,long_tasks',
    ];
    switches.forEach((s, i) => {
        const { taskMs, longTasks, totals } = summarise(events, mainThread, starts[i].ts, ends[i].ts);
        const wall = (ends[i].ts - starts[i].ts) / 1000;
        const f = x => x.toFixed(3);
        lines.push([s.round, s.from, s.to, f(wall), f(s.handlerMs), f(taskMs), f(totals.scripting), f(totals.style),
            f(totals.layout), f(totals.paint), f(totals.other), longTasks].join(','));
    });
    fs.mkdirSync(outDir, { recursive: true });
    const file = path.join(outDir, `browser-level-filter${suffix}.csv`);
    fs.writeFileSync(file, lines.join('\n') + '\n');
    console.log(lines.join('\n'));
    console.log(`written to ${file}`);
} finally {
    await browser.close();
    server.close();
}
