// The `@anthropic-ai/sdk` npm package against a live Gavel: messages.countTokens (plain, with a system prompt
// and a tool, and the beta resource Claude Code uses) and a messages.create beside it. Reads
// GAVEL_ANTHROPIC_URL and GAVEL_TOKEN; prints one JSON object of what it saw.
import Anthropic from "@anthropic-ai/sdk";

const client = new Anthropic({ baseURL: process.env.GAVEL_ANTHROPIC_URL, apiKey: process.env.GAVEL_TOKEN, maxRetries: 0 });
const messages = [{ role: "user", content: "Write about the harbour." }];
const search = { name: "search", description: "Search the archive.",
  input_schema: { type: "object", properties: { q: { type: "string" } } } };
const seen = {};

seen.plain = (await client.messages.countTokens({ model: "newsroom", messages })).input_tokens;
seen.withTools = (await client.messages.countTokens({ model: "newsroom", messages, system: "Answer in one line.",
  tools: [search] })).input_tokens;
seen.beta = (await client.beta.messages.countTokens({ model: "newsroom", messages, tools: [search],
  betas: ["claude-code-20250219"] })).input_tokens;
const message = await client.messages.create({ model: "newsroom", max_tokens: 100, messages });
seen.created = { text: message.content[0].text, stop: message.stop_reason };
console.log(JSON.stringify(seen));
