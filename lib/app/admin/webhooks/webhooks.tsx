/** @jsxImportSource hono/jsx */

import { type Context, Hono } from "hono";
import { rotateSecret } from "../../../webhooks/definition/rotation.ts";
import { saveWebhook } from "../../../webhooks/definition/save.ts";
import { checkGraceSeconds } from "../../../webhooks/definition/validate.ts";
import { replayDeliveries } from "../../../webhooks/delivery/replay.ts";
import type { ChangeEvent, WebhookPatch } from "../../../webhooks/model.ts";
import type { AppEnv } from "../../context.ts";
import { DELIVERIES } from "../background-tasks/background-tasks-views.tsx";
import { withNotice } from "../notices.ts";
import { pageContext, renderPage } from "../page.tsx";
import { parseReplayForm, readReplayForm } from "./replay-form.tsx";
import { SecretRotatedPage } from "./secret-rotation.tsx";
import { emptyWebhookForm, parseWebhookForm } from "./webhook-form.ts";
import { loadHealthOf } from "./webhook-health.tsx";
import {
  refusedErrors,
  type WebhookPages,
  type WebhookRouteDeps,
  webhookPages,
} from "./webhook-pages.tsx";
import {
  WEBHOOKS,
  WebhookCreatedPage,
  WebhookFormPage,
  WebhookListPage,
} from "./webhooks-views.tsx";

/** Deliveries shown on a webhook's page (the link leads to all of them). */
const _RECENT_DELIVERIES = 10;

/** Webhooks: list, create (secret shown once), edit, enable/disable, delete, Send test. */
export function webhookRoutes(deps: WebhookRouteDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const pages = webhookPages(deps);
  listAndCreateRoutes(routes, deps, pages);
  routes.post("/preview", (c) => pages.preview(c));
  webhookPageRoutes(routes, deps, pages);
  webhookActionRoutes(routes, deps, pages);
  return routes;
}

/** The list, the new webhook's form, and creating one (its secret shown once). */
function listAndCreateRoutes(routes: Hono<AppEnv>, deps: WebhookRouteDeps, pages: WebhookPages) {
  const { store } = deps;
  const { fields, readForm, formWithErrors, duplicateNameResponse } = pages;
  const retrySchedule = deps.newWebhookRetrySchedule;
  const initial: Record<string, string> = retrySchedule === undefined ? {} : { retrySchedule };

  routes.get("/", async (c) => {
    const webhooks = await store.webhooks.list();
    const health = await loadHealthOf(store, webhooks, deps.now().getTime());
    return renderPage(
      c,
      <WebhookListPage page={pageContext(c)} webhooks={webhooks} fields={fields} health={health} />,
    );
  });

  routes.get("/new", (c) =>
    renderPage(
      c,
      <WebhookFormPage
        page={pageContext(c)}
        values={emptyWebhookForm(fields, initial)}
        fields={fields}
      />,
    ),
  );

  routes.post("/", async (c) => {
    const values = await readForm(c);
    const parsed = await parseWebhookForm(values, fields);
    if (!parsed.ok) return formWithErrors(c, values, parsed.errors, 400);
    try {
      const saved = await saveWebhook(store.webhooks, {
        before: null,
        fields: parsed.webhook,
        generateSecret: deps.generateSecret,
      });
      if (!saved.ok) return formWithErrors(c, values, refusedErrors(saved.refused), 400);
      const { webhook } = saved;
      // Rendered here rather than after a redirect, so the secret never travels in a URL.
      return renderPage(
        c,
        <WebhookCreatedPage
          page={pageContext(c)}
          webhook={webhook}
          generatedSecret={parsed.webhook.secret === undefined ? webhook.secret : null}
          urlWarning={await deps.urlWarning(webhook.url)}
        />,
      );
    } catch (error) {
      return duplicateNameResponse(c, error, values);
    }
  });
}

/** A webhook's page, its preview, saving its form, replaying its deliveries, rotating its secret. */
function webhookPageRoutes(routes: Hono<AppEnv>, deps: WebhookRouteDeps, pages: WebhookPages) {
  const { store, now } = deps;
  const { readForm, findWebhook, notFound, webhookPage, formWithErrors, duplicateNameResponse } =
    pages;
  const { fields, preview } = pages;

  routes.post("/:id/preview", async (c) => {
    const webhook = await findWebhook(c);
    if (!webhook) return notFound(c);
    return preview(c, webhook);
  });

  routes.get("/:id", async (c) => {
    const webhook = await findWebhook(c);
    if (!webhook) return notFound(c);
    return webhookPage(c, webhook);
  });

  routes.post("/:id/replay", async (c) => {
    const webhook = await findWebhook(c);
    if (!webhook) return notFound(c);
    const values = readReplayForm(await c.req.parseBody());
    const parsed = parseReplayForm(values, webhook.id);
    if (!parsed.ok) return webhookPage(c, webhook, { values, errors: parsed.errors }, 400);
    const done = await replayDeliveries(store.queue, parsed.filter, now().getTime(), deps.bulkPace);
    const back = `${WEBHOOKS}/${webhook.id}`;
    // Cut: the notice's one number is where the next replay starts from.
    if (done.cut && done.nextSince !== null) {
      return c.redirect(withNotice(back, "replayed-cut", done.nextSince), 303);
    }
    return c.redirect(withNotice(back, "replayed", done.count), 303);
  });

  routes.post("/:id/rotate-secret", async (c) => {
    const webhook = await findWebhook(c);
    if (!webhook) return notFound(c);
    const body = await c.req.parseBody();
    const grace = typeof body.graceSeconds === "string" ? body.graceSeconds : "";
    const checked = checkGraceSeconds(grace);
    if (!checked.ok) {
      const errors = [`${checked.problem.charAt(0).toUpperCase()}${checked.problem.slice(1)}`];
      return webhookPage(c, webhook, undefined, 400, { grace, errors });
    }
    const rotated = await rotateSecret(store.webhooks, webhook.id, {
      graceSeconds: checked.value,
      now: now().getTime(),
      generateSecret: deps.generateSecret,
    });
    if (!rotated) return notFound(c);
    // Rendered here rather than after a redirect, so the secret never travels in a URL.
    return renderPage(
      c,
      <SecretRotatedPage
        page={pageContext(c)}
        webhook={rotated.webhook}
        secret={rotated.secret}
        previousValidUntil={rotated.previousValidUntil}
      />,
    );
  });

  routes.post("/:id", async (c) => {
    const webhook = await findWebhook(c);
    if (!webhook) return notFound(c);
    const values = await readForm(c);
    const parsed = await parseWebhookForm(values, fields);
    if (!parsed.ok) return formWithErrors(c, values, parsed.errors, 400, webhook);
    const patch: WebhookPatch = { ...parsed.webhook };
    if (parsed.webhook.enabled !== webhook.enabled) {
      patch.disabledReason = parsed.webhook.enabled ? null : disabledByPerson(c);
    }
    try {
      const saved = await saveWebhook(store.webhooks, { before: webhook, fields: patch });
      if (!saved.ok) return formWithErrors(c, values, refusedErrors(saved.refused), 400, webhook);
    } catch (error) {
      return duplicateNameResponse(c, error, values, webhook);
    }
    // Saved either way; a URL workers will refuse leads back to its form, which says so.
    const refused = (await deps.urlWarning(parsed.webhook.url)) !== null;
    const next = refused ? `${WEBHOOKS}/${webhook.id}` : WEBHOOKS;
    return c.redirect(withNotice(next, "webhook-updated"), 303);
  });
}

/** Enable, disable, delete, and Send test. */
function webhookActionRoutes(routes: Hono<AppEnv>, deps: WebhookRouteDeps, pages: WebhookPages) {
  const { store, now } = deps;
  const { findWebhook, notFound } = pages;

  routes.post("/:id/enable", async (c) => {
    const webhook = await findWebhook(c);
    if (!webhook) return notFound(c);
    await store.webhooks.update(webhook.id, { enabled: true, disabledReason: null });
    return c.redirect(withNotice(WEBHOOKS, "webhook-enabled"), 303);
  });

  routes.post("/:id/disable", async (c) => {
    const webhook = await findWebhook(c);
    if (!webhook) return notFound(c);
    await store.webhooks.update(webhook.id, {
      enabled: false,
      disabledReason: disabledByPerson(c),
    });
    return c.redirect(withNotice(WEBHOOKS, "webhook-disabled"), 303);
  });

  routes.post("/:id/delete", async (c) => {
    const webhook = await findWebhook(c);
    if (!webhook) return notFound(c);
    await store.webhooks.remove(webhook.id);
    return c.redirect(withNotice(WEBHOOKS, "webhook-deleted"), 303);
  });

  routes.post("/:id/test", async (c) => {
    const webhook = await findWebhook(c);
    if (!webhook) return notFound(c);
    const ping: ChangeEvent = {
      event: "ping",
      model: "webhook",
      username: c.get("username"),
      requestId: c.get("requestId"),
      timestamp: now(),
      data: { id: webhook.id, name: webhook.name, message: "Test delivery from the admin" },
      prechange: null,
      postchange: null,
    };
    // Rendered first, holding nothing; the insert re-checks the webhook (see ChangePlan).
    const plan = await store.queue.plan(ping, { webhookId: webhook.id });
    const [deliveryId] = await store.queue.enqueue(ping, { webhookId: webhook.id, plan });
    if (deliveryId === undefined) return c.redirect(withNotice(WEBHOOKS, "test-not-queued"), 303);
    return c.redirect(withNotice(`${DELIVERIES}/${deliveryId}`, "test-queued", deliveryId), 303);
  });
}

function disabledByPerson(c: Context<AppEnv>): string {
  return `Disabled in the admin by ${c.get("username")}`;
}
