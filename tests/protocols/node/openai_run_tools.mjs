// The `openai` npm package's Chat Completions tool helper, `client.chat.completions.runTools(...)`, against
// a live Gavel: one function tool whose function the helper calls, plain and streamed, and a blocked answer.
// Reads GAVEL_BASE_URL and GAVEL_TOKEN; prints one JSON object of what it saw.
import OpenAI from "openai";

// The client's documented `fetch` option: the app keeps a copy of each answer's body, where the block is.
let lastBody = Promise.resolve("");
// What arrived of a body; the helper aborts a stream it rejects, and the copy keeps what came before.
const readUntilAborted = async (response) => {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  try {
    for (let part = await reader.read(); !part.done; part = await reader.read()) text += decoder.decode(part.value, { stream: true });
  } catch {
    return text;
  }
  return text;
};
const keepBody = async (url, init) => {
  const response = await fetch(url, init);
  lastBody = readUntilAborted(response.clone());
  return response;
};
const client = new OpenAI({ baseURL: process.env.GAVEL_BASE_URL, apiKey: process.env.GAVEL_TOKEN, maxRetries: 0,
  fetch: keepBody });
const calls = [];
const weather = {
  type: "function",
  function: {
    name: "get_weather",
    description: "The weather in a city.",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    parse: JSON.parse,
    function: ({ city }) => {
      calls.push(city);
      return `Sunny in ${city}, 21 °C.`;
    },
  },
};
const ask = () => [{ role: "user", content: "What is the weather in Kiel?" }];
const seen = {};

const runner = client.chat.completions.runTools({ model: "newsroom", messages: ask(), tools: [weather] });
const answer = await runner.finalContent();
seen.plain = { answer, calls: [...calls], turns: runner.allChatCompletions().length,
  outcome: (await runner.finalChatCompletion()).gavel.outcome };

calls.length = 0;
const streaming = client.chat.completions.runTools({ model: "newsroom", messages: ask(), tools: [weather], stream: true });
let deltas = "";
streaming.on("content", (delta) => { deltas += delta; });
seen.stream = { answer: await streaming.finalContent(), deltas, calls: [...calls] };

// A block: the helper throws ContentFilterFinishReasonError, which carries no text, before it emits any
// event of that turn; the block message is in the body the `fetch` option kept (`gavel.block.message`,
// `choices[0].message.refusal`; streamed: the last chunks' `delta.refusal` and `gavel`).
const failure = async (promise) => promise.then(() => null, (error) => error.constructor.name);
const blockedRunner = client.chat.completions.runTools({ model: "newsroom", messages: ask(), tools: [weather] });
const error = await failure(blockedRunner.finalContent());
const body = JSON.parse(await lastBody);
seen.blocked = { error, refusal: body.choices[0].message.refusal, content: body.choices[0].message.content,
  finishReason: body.choices[0].finish_reason, gavel: body.gavel.block.message };

const blockedStream = client.chat.completions.runTools({ model: "newsroom", messages: ask(), tools: [weather], stream: true });
let events = "";
blockedStream.on("refusal.delta", ({ delta }) => { events += delta; });
blockedStream.on("content", (delta) => { events += delta; });
const streamError = await failure(blockedStream.finalContent());
const chunks = (await lastBody).split("\n").filter((line) => line.startsWith("data: {")).map((line) => JSON.parse(line.slice(6)));
seen.blockedStream = { error: streamError, events,
  refusal: chunks.map((chunk) => chunk.choices?.[0]?.delta?.refusal ?? "").join(""),
  content: chunks.map((chunk) => chunk.choices?.[0]?.delta?.content ?? "").join(""),
  gavel: chunks.find((chunk) => chunk.gavel)?.gavel.block.message };

console.log(JSON.stringify(seen));
