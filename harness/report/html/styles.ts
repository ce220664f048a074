/** The page's stylesheet, inlined: system fonts only, so the page makes no request to render. */
import { STATE_STYLES } from './states.js';

/** Hatching for the states whose money never arrived: a pattern, so they differ without colour. */
const HATCH = 'repeating-linear-gradient(135deg, rgba(255,255,255,.38) 0 2px, transparent 2px 5px)';

const stateRules = STATE_STYLES.map(
  (style) =>
    `.c.${style.key}{background-color:${style.background};color:${style.foreground}${style.hatched ? `;background-image:${HATCH}` : ''}}`,
).join('\n');

export const PAGE_CSS = `
:root{--ink:#1f2933;--muted:#52606d;--line:#e4e7eb;--bg:#f5f7fa;--card:#fff;--accent:#3b7dd8;--cell:15px;--gap:2px}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--ink);font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif}
main{max-width:1180px;margin:0 auto;padding:24px 24px 64px}
h1{font-size:26px;margin:0 0 4px}
h2{font-size:20px;margin:0 0 4px}
h3{font-size:16px;margin:20px 0 8px}
.c.marked{outline:2px solid #1f2933;outline-offset:-1px}
.c.late{position:relative}
.c.late::after{content:'';position:absolute;top:0;right:0;border-top:6px solid #f5a623;border-left:6px solid transparent}
.c.overcharged{position:relative}
.c.overcharged::before{content:'';position:absolute;bottom:0;left:0;border-bottom:6px solid #b3001b;border-right:6px solid transparent}
p{margin:6px 0}
code,pre,.mono{font-family:ui-monospace,"SFMono-Regular",Menlo,Consolas,"DejaVu Sans Mono",monospace;font-size:13px}
.sub{color:var(--muted);margin:0 0 16px}
.card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:18px 20px;margin:16px 0;box-shadow:0 1px 2px rgba(31,41,51,.04)}
.replay{display:flex;gap:12px;align-items:baseline;flex-wrap:wrap}
.replay pre{margin:0;padding:8px 12px;background:#1f2933;color:#f5f7fa;border-radius:6px;white-space:pre-wrap;flex:1}
.intro{margin:18px 0 0}
.glance{display:grid;grid-template-columns:repeat(auto-fit,minmax(250px,1fr));gap:12px;margin:16px 0}
.glance .card{margin:0;border-top:5px solid #b8e0c2}
.glance .card.bad{border-top-color:#c62828}
.glance .card.warn{border-top-color:#f5a623}
.glance h2{font-size:17px}
.glance .what{color:var(--muted);font-size:13px;min-height:3em}
.glance .when{font-size:13px;margin:.2em 0 .4em;font-weight:600}
.big{display:flex;gap:18px;margin:10px 0 4px;flex-wrap:wrap}
.big div{display:flex;flex-direction:column}
.big b{font-size:26px;line-height:1.1}
.big span{font-size:12px;color:var(--muted)}
.big .lost b{color:#c62828}
.big .dup b{color:#b86e00}
.big .zero b{color:#9aa5b1}
.verdict{font-size:13px;margin-top:8px}
.legend{display:grid;grid-template-columns:repeat(auto-fit,minmax(330px,1fr));gap:6px 20px;padding:0;margin:8px 0 0;list-style:none}
.legend li{display:flex;gap:10px;align-items:flex-start;font-size:13px}
.legend li .c{flex:none;margin-top:2px}
.legend .how{color:var(--muted)}
.c{display:inline-flex;align-items:center;justify-content:center;width:var(--cell);height:var(--cell);font:700 10px/1 system-ui,Helvetica,Arial,sans-serif;font-style:normal;border-radius:2px;user-select:none}
${stateRules}
.counts{display:flex;flex-wrap:wrap;gap:6px 16px;padding:0;margin:10px 0 12px;list-style:none;font-size:13px}
.counts li{display:flex;align-items:center;gap:6px}
.counts li.zero{opacity:.45}
.counts .n{font-variant-numeric:tabular-nums}
.grid{display:inline-flex;flex-direction:column;gap:var(--gap);padding:8px;border:1px solid var(--line);border-radius:8px;background:#fff;max-width:100%;overflow-x:auto}
.grid [role=row]{display:flex;gap:var(--gap);align-items:center}
.grid .rh{width:44px;flex:none;text-align:right;padding-right:6px;color:#9aa5b1;font-size:10px;font-variant-numeric:tabular-nums}
.grid .unexpected-row{margin-top:6px}
.grid .c{cursor:default}
.grid .c:hover{outline:2px solid var(--ink);outline-offset:0}
.grid .c:focus{outline:3px solid var(--accent);outline-offset:1px;position:relative;z-index:1}
.grid.dense{--cell:9px;--gap:1px}
.grid.dense .c{font-size:7px}
.grid.dense .rh{font-size:8px}
.mode-head{display:flex;justify-content:space-between;align-items:baseline;gap:12px;flex-wrap:wrap}
.mode-head .what{color:var(--muted);font-size:13px;margin:0}
.chart{margin-top:10px;overflow-x:auto}
.chart svg{max-width:100%;height:auto}
.note{color:var(--muted);font-size:13px}
#grid-help{font-size:13px;color:var(--muted);margin:0 0 6px}
.how{padding:12px 20px}
details summary{cursor:pointer;font-weight:600;font-size:13px}
details[open] summary{margin-bottom:6px}
kbd{font:12px ui-monospace,monospace;border:1px solid #cbd2d9;border-bottom-width:2px;border-radius:3px;padding:0 4px;background:#fff}
table{border-collapse:collapse;width:100%;font-size:12.5px;margin:8px 0 16px;font-variant-numeric:tabular-nums}
caption{text-align:left;font-weight:600;padding:4px 0 6px}
th,td{padding:5px 5px;border-bottom:1px solid var(--line);white-space:nowrap}
th[scope=row]{white-space:normal;min-width:8em}
thead th{color:var(--muted);font-weight:600;border-bottom:2px solid var(--line);white-space:normal;vertical-align:bottom}
th[scope=row]{text-align:left;font-weight:600}
.num{text-align:right}
.tables{overflow-x:auto}
mark{background:#fde2e2;color:#a61b1b;font-weight:700;padding:0 3px;border-radius:3px}
.facts{display:grid;grid-template-columns:repeat(auto-fit,minmax(220px,1fr));gap:8px 20px;margin:0}
.facts div{display:flex;flex-direction:column}
.facts div.wide{grid-column:1/-1}
.facts dt{font-size:12px;color:var(--muted)}
.facts dd{margin:0;font-weight:600;overflow-wrap:anywhere}
#tip{position:fixed;z-index:10;max-width:380px;background:#fff;border:1px solid #cbd2d9;border-radius:8px;box-shadow:0 8px 24px rgba(31,41,51,.18);padding:10px 12px;font-size:13px;pointer-events:none}
#tip .tip-head{display:flex;gap:8px;align-items:center;font-size:15px}
#tip .tip-meaning{color:var(--muted);margin:4px 0 8px}
#tip dl{display:grid;grid-template-columns:auto 1fr;gap:2px 10px;margin:0}
#tip dt{color:var(--muted)}
#tip dd{margin:0;overflow-wrap:anywhere}
#tip .tip-caption{margin:8px 0 4px;color:var(--muted)}
#tip ul{list-style:none;padding:0;margin:0;display:grid;gap:3px}
#tip li{display:flex;gap:6px;align-items:center}
#tip li.current span{font-weight:700}
footer{color:var(--muted);font-size:12px;margin-top:24px}
@media (prefers-reduced-motion:no-preference){.grid .c{transition:transform .05s}}
`;
