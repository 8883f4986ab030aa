// Package schemas holds the JSON Schemas (draft 2020-12) of jido-bus's
// built-in signals and of the log form of every directive, and the validator
// every other package uses for schemas of its own (action params, agent and
// skill state, skill config).
//
// # Files
//
// The built-in schemas are the files under json/, embedded in the binary.
// A file json/<kind>/<name>.json is the schema named <name> of kind <kind>:
// signal schemas are named by their signal type (jido.agent.error),
// directive schemas by "directive." and the directive's kind
// (directive.emit), and defs holds definitions the others refer to with
// "$ref": "../defs/<name>.json". Adding a schema is adding a file: a new
// directory becomes a new kind (a later "event" kind holds the conversation
// events), and Builtin lists it without a code change. Packages that own
// their schemas elsewhere embed them in an fs.FS of the same layout and add
// them with Registry.AddFS.
//
// # Validation
//
// Schema.Validate checks a decoded JSON value (what encoding/json decodes
// into an any: map[string]any, []any, float64 or json.Number, string, bool,
// nil). Its error is a *ValidationError that lists each failing field by
// JSON pointer (RFC 6901), so a reply can say "/by: got string, want
// integer" rather than "invalid".
//
// A compiled Schema is immutable and safe for concurrent use. Compiling is
// slow next to validating, so callers compile once (at program start, when
// an agent type is defined) and keep the *Schema.
package schemas
