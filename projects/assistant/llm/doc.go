// Package llm talks to language models for the assistant: one small
// [Provider] interface and three implementations — an OpenAI-compatible
// Chat Completions client (OpenAI, Ollama, vLLM, llama.cpp's server, any
// compatible gateway), an Anthropic Messages client, and a scripted provider
// that replays a JSONL file of turns for offline demos and tests.
//
// # One attempt per call; the caller retries
//
// A provider makes exactly ONE attempt per [Provider.Complete] call: the
// SDKs' own retries are switched off. When the attempt fails, the error is an
// [*Error] whose Kind says what happened and whose [Error.Retryable] says
// whether trying again can help (rate_limited, server, stream, timeout). The
// caller — the assistant's LLMCall executor — records one event per attempt
// and waits [Backoff](attempt, err.RetryAfter, rnd) before the next one, so
// every attempt and every wait is visible in the log.
//
// # Keys
//
// Which server gets which key is the node operator's decision: an
// [Endpoint] (serve --provider) names the address and the variable holding
// the key, and a project only chooses an endpoint by name. API keys are
// read from that variable by [New], once, and live only inside the SDK
// client: no exported field holds a key, and a provider's String,
// GoString, Format and MarshalJSON never print it. A server may still echo
// the key in an error: [Scrubbing] removes the node's secrets from every
// text a call returns.
package llm
