// The `openai` npm package against a live Gavel: responses.create plain, streamed, a function-tool
// loop and a block. Reads GAVEL_BASE_URL and GAVEL_TOKEN; prints one JSON object of what it saw.
import OpenAI from "openai";

const client = new OpenAI({ baseURL: process.env.GAVEL_BASE_URL, apiKey: process.env.GAVEL_TOKEN, maxRetries: 0 });
const weather = { type: "function", name: "get_weather", description: "The weather in a city.",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } };
const seen = {};

const plain = await client.responses.create({ model: "newsroom", input: "Write about the harbour." });
seen.plain = { text: plain.output_text, status: plain.status, outcome: plain.gavel.outcome };

const stream = await client.responses.create({ model: "newsroom", input: "Write about the harbour.", stream: true });
const types = [];
let deltas = "";
let final = null;
for await (const event of stream) {
  types.push(event.type);
  if (event.type === "response.output_text.delta") deltas += event.delta;
  if (event.type === "response.completed") final = event.response;
}
seen.stream = { first: types[0], last: types.at(-1), deltas, outcome: final.gavel.outcome };

const input = [{ role: "user", content: "What is the weather in Kiel?" }];
const first = await client.responses.create({ model: "newsroom", input, tools: [weather] });
const call = first.output.find((item) => item.type === "function_call");
input.push(...first.output, { type: "function_call_output", call_id: call.call_id, output: "Sunny, 21 °C." });
const second = await client.responses.create({ model: "newsroom", input, tools: [weather] });
seen.tools = { name: call.name, arguments: JSON.parse(call.arguments), answer: second.output_text };

const blocked = await client.responses.create({ model: "newsroom", input: "Write about the harbour." });
seen.blocked = { status: blocked.status, reason: blocked.incomplete_details.reason,
  refusal: blocked.output[0].content[0].refusal, text: blocked.output_text };

console.log(JSON.stringify(seen));
