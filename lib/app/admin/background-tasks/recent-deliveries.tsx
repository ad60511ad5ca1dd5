/** @jsxImportSource hono/jsx */
import type { Delivery } from "../../../webhooks/model.ts";
import type { PageContext } from "../layout.tsx";
import { DeliveryTable } from "./background-tasks-views.tsx";

/** A section with the newest few deliveries of something (a webhook, an item) and a link to all. */
export function RecentDeliveries(props: {
  page: PageContext;
  title: string;
  deliveries: Delivery[];
  /** The full, paginated listing. */
  allHref: string;
  /** This page, where a Retry comes back to. */
  returnTo: string;
  nowMs: number;
}) {
  return (
    <section>
      <h2>
        {props.title}{" "}
        <a class="muted" href={props.allHref}>
          (all)
        </a>
      </h2>
      <DeliveryTable
        deliveries={props.deliveries}
        page={props.page}
        nowMs={props.nowMs}
        returnTo={props.returnTo}
      />
    </section>
  );
}
