import { setDefaultTimeout } from "bun:test";
import { startFakeOllama } from "../../../fakes/ollama.ts";
import { DEFAULT_OPENAI_MODEL, startFakeOpenAi } from "../../../fakes/openai-server.ts";
import { modelClientContract } from "./contract.ts";

setDefaultTimeout(20_000);

modelClientContract({
  api: "ollama",
  start(answer) {
    const fake = startFakeOllama({
      models: ["llama3.2:latest"],
      generate: (body) => answer(body.prompt),
    });
    return Object.assign(fake, { model: "llama3.2" });
  },
});

modelClientContract({
  api: "openai",
  start(answer) {
    const fake = startFakeOpenAi({
      complete: (body) => answer(body.messages.at(-1)?.content ?? ""),
    });
    return Object.assign(fake, { model: DEFAULT_OPENAI_MODEL });
  },
});
