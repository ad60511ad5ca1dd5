import { escapeHtml } from "./html-escape.ts";

/**
 * The page's own headings in the summaries' language, for the languages a translation is known
 * for; English otherwise. `lang` names the language of the translated words (undefined: English),
 * so the page marks each element with the language it is written in: the page itself is English
 * (its facts and notes), its summaries and translated headings are not.
 */
export interface PageWords {
  /** BCP 47 code of the words below when they are not English; undefined when English. */
  lang: string | undefined;
  frontPage: string;
  newSinceLastRun: string;
  stillOnFrontPage: string;
  earlierToday: string;
  article: string;
  discussion: string;
  contents: string;
  noSummary: string;
}

const ENGLISH: PageWords = {
  lang: undefined,
  frontPage: "Front page",
  newSinceLastRun: "New since the last run",
  stillOnFrontPage: "Still on the front page",
  earlierToday: "Earlier today",
  article: "Article",
  discussion: "Discussion",
  contents: "Contents",
  noSummary: "No summary.",
};

type Translation = Omit<PageWords, "lang">;

const TRANSLATIONS: Readonly<Record<string, Translation>> = {
  de: {
    frontPage: "Titelseite",
    newSinceLastRun: "Neu seit dem letzten Lauf",
    stillOnFrontPage: "Weiterhin auf der Titelseite",
    earlierToday: "Früher heute",
    article: "Artikel",
    discussion: "Diskussion",
    contents: "Inhalt",
    noSummary: "Keine Zusammenfassung.",
  },
  fr: {
    frontPage: "Page d'accueil",
    newSinceLastRun: "Nouveau depuis la dernière exécution",
    stillOnFrontPage: "Toujours en page d'accueil",
    earlierToday: "Plus tôt aujourd'hui",
    article: "Article",
    discussion: "Discussion",
    contents: "Sommaire",
    noSummary: "Pas de résumé.",
  },
  es: {
    frontPage: "Portada",
    newSinceLastRun: "Nuevo desde la última ejecución",
    stillOnFrontPage: "Sigue en portada",
    earlierToday: "Hoy, más temprano",
    article: "Artículo",
    discussion: "Debate",
    contents: "Índice",
    noSummary: "Sin resumen.",
  },
  it: {
    frontPage: "Prima pagina",
    newSinceLastRun: "Nuovo dall'ultima esecuzione",
    stillOnFrontPage: "Ancora in prima pagina",
    earlierToday: "Prima, oggi",
    article: "Articolo",
    discussion: "Discussione",
    contents: "Indice",
    noSummary: "Nessun riassunto.",
  },
  pt: {
    frontPage: "Página inicial",
    newSinceLastRun: "Novo desde a última execução",
    stillOnFrontPage: "Ainda na página inicial",
    earlierToday: "Hoje, mais cedo",
    article: "Artigo",
    discussion: "Discussão",
    contents: "Índice",
    noSummary: "Sem resumo.",
  },
  nl: {
    frontPage: "Voorpagina",
    newSinceLastRun: "Nieuw sinds de vorige keer",
    stillOnFrontPage: "Nog op de voorpagina",
    earlierToday: "Eerder vandaag",
    article: "Artikel",
    discussion: "Discussie",
    contents: "Inhoud",
    noSummary: "Geen samenvatting.",
  },
  ja: {
    frontPage: "トップページ",
    newSinceLastRun: "前回以降の新着",
    stillOnFrontPage: "引き続きトップページに掲載",
    earlierToday: "今日の先の掲載",
    article: "記事",
    discussion: "議論",
    contents: "目次",
    noSummary: "要約はありません。",
  },
};

/** The words for `locale` ("de", "pt-BR": by its primary subtag); English when none is known. */
export function pageWords(locale: string | undefined): PageWords {
  const primary = (locale ?? "en").toLowerCase().split("-")[0] ?? "en";
  const translation = TRANSLATIONS[primary];
  return translation && primary !== "en" ? { ...translation, lang: locale } : ENGLISH;
}

/** ` lang="de"` for an element whose text is in `lang`; nothing for English. */
export function langAttribute(lang: string | undefined): string {
  return lang === undefined || lang.toLowerCase() === "en" ? "" : ` lang="${escapeHtml(lang)}"`;
}
