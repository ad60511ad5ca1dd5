/** The admin's whole stylesheet, inlined by the layout: no build step, no extra request. */
export const STYLES = `
:root { --fg: #1d2430; --muted: #5b6472; --line: #d8dde4; --bg: #f6f7f9; --accent: #1f5fbf;
  --ok: #1c7c3c; --bad: #b3261e; --warn: #9a6700; --queued: #3d5a80; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  color: var(--fg); background: var(--bg); }
a { color: var(--accent); }
header.top { display: flex; flex-wrap: wrap; gap: .4rem 1.5rem; align-items: center;
  padding: .6rem 1.5rem; background: #1d2430; color: #fff; }
header.top a { color: #dfe6f0; text-decoration: none; }
header.top a.brand { font-weight: 600; color: #fff; }
header.top nav { display: flex; flex-wrap: wrap; gap: .25rem 1rem; flex: 1; }
header.top nav a { white-space: nowrap; }
header.top nav a.current { color: #fff; border-bottom: 2px solid #fff; }
header.top .user { color: #b8c2d0; display: flex; gap: .75rem; align-items: center; }
header.top button.link { color: #dfe6f0; }
main { max-width: 80rem; margin: 0 auto; padding: 1.25rem 1.5rem 3rem; }
h1 { font-size: 1.5rem; margin: .25rem 0 1rem; }
h2 { font-size: 1.15rem; margin: 1.75rem 0 .5rem; }
.notice { background: #e7f0fd; border: 1px solid #b6cdf2; padding: .5rem .75rem; border-radius: 4px; }
.error-box { background: #fdecea; border: 1px solid #f1b5b0; padding: .5rem .75rem; border-radius: 4px; }
.secret { background: #fff8e1; border: 1px solid #e8c96b; padding: .75rem; border-radius: 4px; }
.secret code { font-size: 1rem; user-select: all; }
.counts { display: flex; gap: .75rem; flex-wrap: wrap; margin-bottom: 1rem; }
.counts a { display: block; min-width: 9rem; padding: .6rem .9rem; background: #fff;
  border: 1px solid var(--line); border-left-width: 4px; border-radius: 4px; text-decoration: none; color: var(--fg); }
.counts a strong { display: block; font-size: 1.5rem; }
.counts .queued { border-left-color: var(--queued); } .counts .delivering { border-left-color: var(--warn); }
.counts .successful { border-left-color: var(--ok); } .counts .failed { border-left-color: var(--bad); }
table { width: 100%; border-collapse: collapse; background: #fff; border: 1px solid var(--line); }
th, td { text-align: left; padding: .4rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: #eef1f5; font-weight: 600; font-size: .85rem; color: var(--muted); }
tr:nth-child(even) td { background: #fafbfc; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.wrap { max-width: 28rem; overflow-wrap: anywhere; }
table.fields th { width: 12rem; background: #f3f5f8; }
.empty { color: var(--muted); font-style: italic; }
.badge { display: inline-block; padding: 0 .45rem; border-radius: 3px; font-size: .8rem;
  font-weight: 600; color: #fff; background: var(--muted); }
.badge.queued { background: var(--queued); } .badge.delivering { background: var(--warn); }
.badge.successful, .badge.enabled { background: var(--ok); }
.badge.failed, .badge.disabled, .badge.stale { background: var(--bad); }
.badge.live { background: var(--ok); }
.badge.healthy { background: var(--ok); } .badge.failing { background: var(--bad); }
.badge.idle { background: var(--muted); }
section.health table.fields { margin-bottom: .75rem; }
.warning { margin: 1rem 0; }
.url-warning { background: #fff6e0; border: 1px solid #e8c26b; padding: .4rem .6rem; border-radius: 4px;
  font-weight: normal; overflow-wrap: anywhere; }
.disabled-note { margin-bottom: 1rem; } .disabled-note p { margin: 0 0 .5rem; }
.muted { color: var(--muted); }
pre { background: #fff; border: 1px solid var(--line); padding: .75rem; overflow: auto;
  max-height: 32rem; white-space: pre-wrap; overflow-wrap: anywhere; font-size: .85rem; }
form.inline { display: inline; margin: 0; }
button, .button { font: inherit; font-size: .9rem; padding: .25rem .7rem; border: 1px solid #9aa4b2;
  border-radius: 4px; background: #fff; color: var(--fg); cursor: pointer; text-decoration: none; display: inline-block; }
button:hover, .button:hover { background: #eef1f5; }
button.primary { background: var(--accent); border-color: var(--accent); color: #fff; }
button.danger { border-color: var(--bad); color: var(--bad); }
button.link { border: 0; background: none; padding: 0; text-decoration: underline; }
.actions { display: flex; gap: .5rem; flex-wrap: wrap; align-items: center; margin: .75rem 0; }
td .actions { margin: 0; }
form.stacked { background: #fff; border: 1px solid var(--line); padding: 1rem 1.25rem; max-width: 48rem; }
form.stacked label { display: block; font-weight: 600; margin-top: .8rem; }
form.stacked .hint { display: block; font-weight: normal; color: var(--muted); font-size: .85rem; }
form.stacked input[type=text], form.stacked input[type=url], form.stacked input[type=password],
form.stacked input[type=number], form.stacked select, form.stacked textarea {
  width: 100%; font: inherit; font-weight: normal; padding: .35rem .5rem; border: 1px solid #9aa4b2;
  border-radius: 4px; }
form.stacked textarea { font-family: ui-monospace, monospace; min-height: 5rem; }
form.stacked fieldset { border: 0; padding: 0; margin: .8rem 0 0; }
form.stacked fieldset label { display: inline-block; font-weight: normal; margin: 0 1rem 0 0; }
form.stacked legend { font-weight: 600; padding: 0; }
.field-error { display: block; color: var(--bad); font-size: .85rem; }
form.search { display: flex; flex-wrap: wrap; gap: .4rem; align-items: center; margin: 0 0 1rem; }
form.search input { font: inherit; padding: .25rem .5rem; border: 1px solid #9aa4b2; border-radius: 4px;
  width: 22rem; max-width: 100%; }
.pager { display: flex; gap: 1rem; margin: .6rem 0; }
details summary { cursor: pointer; color: var(--accent); }
/* Phones and narrow windows: the menu gets a row of its own and wide tables scroll sideways
   inside themselves, so the page never scrolls sideways. */
@media (max-width: 40rem) {
  header.top { padding: .5rem 1rem; gap: .3rem 1rem; }
  header.top nav { order: 3; flex-basis: 100%; }
  header.top .user { margin-left: auto; }
  main { padding: 1rem 1rem 2rem; }
  table { display: block; overflow-x: auto; }
  th, td { white-space: nowrap; }
  td.wrap { white-space: normal; min-width: 14rem; }
  /* A summary's name over its value, each the page's width: a long id or URL wraps, never clipped. */
  table.fields, table.fields tbody, table.fields tr { display: block; }
  table.fields th, table.fields td { display: block; width: auto; white-space: normal;
    min-width: 0; max-width: none; overflow-wrap: anywhere; }
  table.fields th { border-bottom: 0; padding-bottom: 0; }
  table.fields pre, table.fields code { white-space: pre-wrap; overflow-wrap: anywhere; }
  /* Lists become one card per row: the key column first and bold, every other value under its
     column's name, the row's action (Retry, Disable…) last; nothing is off to the right. */
  table.list { display: block; overflow: visible; border: 0; background: none; }
  table.list thead { display: none; }
  table.list tbody, table.list tr { display: block; }
  table.list tr { background: #fff; border: 1px solid var(--line); border-radius: 4px;
    margin-bottom: .6rem; padding: .45rem .7rem; }
  table.list td { display: block; border: 0; padding: .1rem 0; white-space: normal;
    text-align: left; background: none; overflow-wrap: anywhere; min-width: 0; }
  table.list tr:nth-child(even) td { background: none; }
  table.list td:first-child { font-weight: 600; }
  table.list td[data-label]::before { content: attr(data-label) ": "; color: var(--muted);
    font-size: .85rem; font-weight: normal; }
  table.list td.action { padding-top: .35rem; }
  table.list td.action:empty { display: none; }
}
`;
