/** The HTML report's style sheet (inline: the page loads nothing). */
export const reportStyle = `
:root { --deny: #c62828; --ask: #d18b00; --allow: #2e7d32; --none: #9e9e9e; --fg: #1d1d1f; --dim: #6b6b70; --line: #e3e3e6; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, sans-serif; color: var(--fg); margin: 0; padding: 16px 24px 48px; background: #fafafa; }
h1 { font-size: 20px; margin: 0 0 4px; }
h2 { font-size: 16px; margin: 28px 0 8px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
section { max-width: 1200px; }
.dim { color: var(--dim); }
.mono, pre, td.mono { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 12.5px; }
pre { white-space: pre-wrap; word-break: break-all; background: #fff; border: 1px solid var(--line); padding: 8px; margin: 4px 0; }
table { border-collapse: collapse; width: 100%; background: #fff; }
th, td { text-align: left; padding: 3px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 600; background: #f1f1f3; position: sticky; top: 0; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.pick { cursor: pointer; }
tr.pick:hover { background: #eef3ff; }
tr.chosen { background: #dfe8ff; }
.deny { color: var(--deny); font-weight: 600; }
.ask { color: var(--ask); font-weight: 600; }
.allow { color: var(--allow); font-weight: 600; }
.failed { color: var(--deny); }
.swatch { display: inline-block; width: 10px; height: 10px; margin: 0 4px 0 12px; border-radius: 2px; }
canvas { display: block; background: #fff; border: 1px solid var(--line); }
.controls { display: flex; gap: 8px; align-items: center; margin: 8px 0; flex-wrap: wrap; }
.controls input[type=search] { width: 280px; padding: 3px 6px; }
button { padding: 2px 10px; }
.clip { max-width: 420px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
#drill { background: #fff; border: 1px solid var(--line); padding: 8px 12px; min-height: 40px; }
.round { margin: 8px 0 2px; font-weight: 600; }
.bad { color: var(--deny); }
details { margin: 4px 0; }
summary { cursor: pointer; }
`
