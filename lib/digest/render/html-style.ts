/**
 * The stylesheet of the digest's pages (a day's page and the archive index), inlined so a page
 * loads nothing. Light and dark follow the reader's system; the accent is HN's orange, darkened
 * on light backgrounds so small text keeps a 4.5:1 contrast.
 */
export const PAGE_STYLE = `
  :root { color-scheme: light dark; --text: #1a1a1a; --page: #ffffff; --muted: #5f6368;
          --accent: #b84a00; --rule: #8884; --panel: #f6f6ef; }
  @media (prefers-color-scheme: dark) {
    :root { --text: #e6e6e6; --page: #131417; --muted: #a0a4ab; --accent: #ff8a3d;
            --panel: #1f2126; }
  }
  html { background: var(--page); color: var(--text); }
  body { font: 17px/1.55 system-ui, -apple-system, "Segoe UI", sans-serif; max-width: 46rem;
         margin: 1.5rem auto 4rem; padding: 0 1rem; overflow-wrap: break-word; }
  header h1 { font-size: 1.6rem; margin: 0 0 .25rem; }
  sup.cite { font-size: .7em; line-height: 0; } sup.cite a { text-decoration: none; }
  header p, .facts, .toc .facts { color: var(--muted); font-size: .9rem; margin: .25rem 0; }
  header nav { font-size: .9rem; margin-top: .5rem; }
  .toc { background: var(--panel); border-radius: .5rem; padding: .75rem 1rem; margin: 1.25rem 0;
         scroll-margin-top: 1rem; }
  .toc h2 { font-size: .95rem; margin: .5rem 0 .25rem; text-transform: uppercase;
            letter-spacing: .04em; color: var(--muted); }
  .toc ol { margin: 0 0 .5rem; padding-left: 2.2rem; }
  .toc li { margin: .3rem 0; line-height: 1.35; }
  .toc a { text-decoration: none; font-weight: 500; }
  .toc a:hover { text-decoration: underline; }
  .toc .facts { display: inline; font-size: .85rem; }
  .toc .facts::before { content: "· "; }
  @media (max-width: 40rem) {
    .toc .facts { display: block; margin: 0; } .toc .facts::before { content: none; }
  }
  section > h2 { font-size: 1rem; text-transform: uppercase; letter-spacing: .04em;
                 color: var(--muted); margin: 2rem 0 0; }
  article { border-top: 1px solid var(--rule); padding: 1rem 0; scroll-margin-top: 1rem; }
  article h3 { font-size: 1.2rem; margin: 0 0 .25rem; line-height: 1.3; }
  article h4 { font-size: .95rem; margin: .9rem 0 .1rem; color: var(--accent); }
  article p, article ul, article ol { margin: .4rem 0; }
  article h5 { font-size: .9rem; margin: .75rem 0 .25rem; }
  .rank { color: var(--muted); font-weight: normal; }
  pre { overflow-x: auto; background: var(--panel); padding: .5rem .75rem; border-radius: .25rem; }
  code { font-size: .9em; }
  a { color: inherit; }
  .missing { color: var(--muted); font-style: italic; }
  .notes { font-size: .9rem; color: var(--muted); }
  .new { color: var(--accent); font-weight: 600; }
  .top { font-size: .85rem; color: var(--muted); margin-bottom: 0; }
  .days { padding-left: 1.2rem; } .days li { margin: .3rem 0; }
  .headlines { margin: .2rem 0 .7rem; padding-left: 1.4rem; font-size: .95rem; }`;
