package a2a

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/projects/gateway"
)

// BearerScheme is the name of the security scheme a card declares when
// the front door asks for a bearer token.
const BearerScheme = "bearer"

// The card is the first thing a client reads, before it knows how to
// authenticate, so the front door lets anyone read it (Public): it names
// the agent, its endpoints and the bearer scheme. Where the door asks for
// a token, what the project offers (its commands, workflows and skills)
// is not for anyone who can reach the port: the card read without a token
// lists no skills and says there is an extended card
// (capabilities.extendedAgentCard), which GetExtendedAgentCard — behind
// the token — and the card read with a token give whole.

// serveCard serves the project's agent card, built on each request from
// the project's assets (so a new command shows at once). The JSON is the
// SDK's union of the 1.0 and 0.3 card formats, so clients of either
// version read it.
func (g *Gateway) serveCard(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("project")
	_, known := gateway.CallerFrom(r.Context())
	whole := known || !g.opts.BearerAuth
	p, err := g.host.Project(r.Context(), id)
	if err != nil {
		msg := "no open project " + quote(id)
		if whole {
			// Why is for a caller the door knows (the state of a project
			// that failed to open, say), not for anyone.
			msg += ": " + bus.AsError(err).Message
		}
		writeError(w, http.StatusNotFound, bus.ReasonNotFound, msg)
		return
	}
	card := g.card(p, g.base(r), whole)
	a2asrv.NewAgentCardHandler(cardJSON{card}).ServeHTTP(w, r)
}

// base is the public base URL of the front door for request r.
func (g *Gateway) base(r *http.Request) string {
	if g.opts.BaseURL != "" {
		return g.opts.BaseURL
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

type baseKey struct{}

// extendedCard is the whole card of the request's project.
func (g *Gateway) extendedCard(ctx context.Context) (*sdk.AgentCard, error) {
	p, err := g.host.Project(ctx, projectOf(ctx))
	if err != nil {
		return nil, fromHost(err)
	}
	base, _ := ctx.Value(baseKey{}).(string)
	return g.card(p, base, true), nil
}

// cardJSON serves a card as the SDK's union of its 1.0 and 0.3 forms, but
// with each security scheme in both forms at once: the 0.3 form the SDK
// writes under securitySchemes ({"type":"http","scheme":…}) beside the
// 1.0 one the SDK's 1.0 client parses ({"httpAuthSecurityScheme":{…}}),
// which share the key securitySchemes. Each client reads its own fields
// and passes over the others'.
type cardJSON struct{ card *sdk.AgentCard }

func (c cardJSON) Card(context.Context) (*sdk.AgentCard, error) { return c.card, nil }

func (c cardJSON) CardJSON(ctx context.Context) ([]byte, error) {
	union, err := a2av0.NewAgentCardProducer(c).(a2asrv.AgentCardJSONProducer).CardJSON(ctx)
	if err != nil || len(c.card.SecuritySchemes) == 0 {
		return union, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(union, &fields); err != nil {
		return nil, fmt.Errorf("agent card of %s: %w", c.card.Name, err)
	}
	var v03, v1 map[string]map[string]json.RawMessage
	if err := json.Unmarshal(fields["securitySchemes"], &v03); err != nil {
		return nil, fmt.Errorf("agent card of %s: the 0.3 security schemes: %w", c.card.Name, err)
	}
	b, err := json.Marshal(c.card.SecuritySchemes)
	if err != nil {
		return nil, fmt.Errorf("agent card of %s: %w", c.card.Name, err)
	}
	if err := json.Unmarshal(b, &v1); err != nil {
		return nil, fmt.Errorf("agent card of %s: the 1.0 security schemes: %w", c.card.Name, err)
	}
	for name, scheme := range v03 {
		// The SDK's 0.3 form nests the 1.0 scheme under a key of its own
		// ("http"), which neither version's schema has.
		for k := range scheme {
			switch k {
			case "type", "scheme", "bearerFormat", "description", "in", "name", "flows", "openIdConnectUrl", "oauth2MetadataUrl":
			default:
				delete(scheme, k)
			}
		}
		for k, v := range v1[name] {
			scheme[k] = v
		}
	}
	if fields["securitySchemes"], err = json.Marshal(v03); err != nil {
		return nil, fmt.Errorf("agent card of %s: %w", c.card.Name, err)
	}
	return json.Marshal(fields)
}

// card is project p's agent card, its endpoints under base (the front
// door's URL): its commands, workflows and skills as the agent's skills
// when whole, none otherwise; streaming; no push notifications (the
// gateway sends none); the bearer scheme when the front door needs one.
func (g *Gateway) card(p Project, base string, whole bool) *sdk.AgentCard {
	// The trailing slash makes the card's own path a relative reference
	// from the agent's URL, which is how clients find it.
	url := base + "/a2a/" + p.ID + "/"
	skills := make([]sdk.AgentSkill, 0, len(p.Skills))
	for _, s := range p.Skills {
		if !whole {
			break
		}
		tags := s.Tags
		if tags == nil {
			tags = []string{}
		}
		skills = append(skills, sdk.AgentSkill{ID: s.ID, Name: s.Name, Description: s.Description, Tags: tags})
	}
	v0 := sdk.NewAgentInterface(url, sdk.TransportProtocolJSONRPC)
	v0.ProtocolVersion = a2av0.Version
	card := &sdk.AgentCard{
		Name:        p.ID,
		Description: p.Description,
		Version:     "1",
		SupportedInterfaces: []*sdk.AgentInterface{
			sdk.NewAgentInterface(url, sdk.TransportProtocolJSONRPC),
			v0,
		},
		Capabilities:       sdk.AgentCapabilities{Streaming: true, ExtendedAgentCard: g.opts.BearerAuth},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain", "application/json"},
		Skills:             skills,
	}
	if g.opts.BearerAuth {
		card.SecuritySchemes = sdk.NamedSecuritySchemes{
			BearerScheme: sdk.HTTPAuthSecurityScheme{Scheme: "Bearer", Description: "the token of the jido-bus HTTP front door (serve --http-token-env); every method needs it"},
		}
		card.SecurityRequirements = sdk.SecurityRequirementsOptions{{BearerScheme: sdk.SecuritySchemeScopes{}}}
	}
	return card
}
