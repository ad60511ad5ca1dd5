/** @jsxImportSource hono/jsx */
import { Layout, type PageContext } from "./layout.tsx";

export function NotFoundPage(props: { page: PageContext; what: string }) {
  return (
    <Layout title="Not found" page={props.page}>
      <h1>{props.what} not found</h1>
      <p>
        It may have been deleted. <a href="/admin">Back to the admin</a>
      </p>
    </Layout>
  );
}
