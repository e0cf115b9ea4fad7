// Vercel's AI SDK in its default mode — createOpenAI({baseURL})(model), the Responses API — against a
// live Gavel: generateText and streamText with one tool, then a blocked answer. Reads GAVEL_BASE_URL
// and GAVEL_TOKEN; prints one JSON object of what it saw.
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, streamText, stepCountIs, tool } from "ai";
import { z } from "zod";

// Every body the SDK sends, to show what it sent by default.
const sent = [];
const recordingFetch = async (url, init) => { sent.push(JSON.parse(init.body)); return fetch(url, init); };
const openai = createOpenAI({ baseURL: process.env.GAVEL_BASE_URL, apiKey: process.env.GAVEL_TOKEN,
  fetch: recordingFetch });
const model = openai("newsroom");
const tools = {
  get_weather: tool({
    description: "The weather in a city.",
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => `Sunny in ${city}, 21 °C.`,
  }),
};
const seen = {};

const generated = await generateText({ model, prompt: "What is the weather in Kiel?", tools,
  stopWhen: stepCountIs(3), maxRetries: 0 });
seen.generate = { text: generated.text, steps: generated.steps.length,
  toolCalls: generated.steps[0].toolCalls.map((c) => [c.toolName, c.input]) };

// A second turn with the SDK's own messages of the first: with `store` on (the default) the SDK sends
// the earlier answer's text as an item_reference, which Gavel resolves to the item it returned.
const followUp = await generateText({ model, maxRetries: 0, messages: [
  { role: "user", content: "What is the weather in Kiel?" }, ...generated.response.messages,
  { role: "user", content: "And tomorrow?" }] });
seen.followUp = { text: followUp.text, inputTypes: sent.at(-1).input.map((item) => item.type ?? item.role) };

const streamed = streamText({ model, prompt: "What is the weather in Kiel?", tools, stopWhen: stepCountIs(3),
  maxRetries: 0 });
let text = "";
let chunks = 0;
for await (const delta of streamed.textStream) { text += delta; chunks += 1; }
seen.stream = { text, chunks, steps: (await streamed.steps).length };

const blocked = await generateText({ model, prompt: "Write about the harbour.", maxRetries: 0 });
seen.blocked = { text: blocked.text, finishReason: blocked.finishReason,
  content: blocked.content, providerMetadata: blocked.providerMetadata ?? null };

const blockedStream = streamText({ model, prompt: "Write about the harbour.", maxRetries: 0 });
let blockedText = "";
for await (const delta of blockedStream.textStream) blockedText += delta;
seen.blockedStream = { text: blockedText, finishReason: await blockedStream.finishReason };

console.log(JSON.stringify(seen));
