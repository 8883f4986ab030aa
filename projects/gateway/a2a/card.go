package a2agw

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/jido-bus/jido-bus/bus"
)

// BearerScheme is the name of the security scheme a card declares when
// the front door asks for a bearer token.
const BearerScheme = "bearer"

// serveCard serves the project's agent card, built on each request from
// the project's assets (so a new command shows at once). The JSON is the
// SDK's union of the 1.0 and 0.3 card formats, so clients of either
// version read it.
func (g *Gateway) serveCard(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("project")
	p, err := g.host.Project(r.Context(), id)
	if err != nil {
		writeError(w, http.StatusNotFound, bus.ReasonNotFound, "no open project "+quote(id)+": "+bus.AsError(err).Message)
		return
	}
	base := g.opts.BaseURL
	if base == "" {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		base = scheme + "://" + r.Host
	}
	card := g.card(p, base+"/a2a/"+p.ID)
	a2asrv.NewAgentCardHandler(cardJSON{card}).ServeHTTP(w, r)
}

// cardJSON serves a card as the SDK's union of its 1.0 and 0.3 forms,
// except securitySchemes, whose two forms share the key and differ: the
// 1.0 form is kept, so the SDK's 1.0 client parses the card (the 0.3
// "security" list, its own key, stays).
type cardJSON struct{ card *a2a.AgentCard }

func (c cardJSON) Card(context.Context) (*a2a.AgentCard, error) { return c.card, nil }

func (c cardJSON) CardJSON(ctx context.Context) ([]byte, error) {
	union, err := a2av0.NewAgentCardProducer(c).(a2asrv.AgentCardJSONProducer).CardJSON(ctx)
	if err != nil || len(c.card.SecuritySchemes) == 0 {
		return union, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(union, &fields); err != nil {
		return nil, fmt.Errorf("agent card of %s: %w", c.card.Name, err)
	}
	if fields["securitySchemes"], err = json.Marshal(c.card.SecuritySchemes); err != nil {
		return nil, fmt.Errorf("agent card of %s: %w", c.card.Name, err)
	}
	return json.Marshal(fields)
}

// card is project p's agent card at url: its commands, workflows and
// skills as the agent's skills; streaming; no push notifications (the
// gateway sends none); the bearer scheme when the front door needs one.
func (g *Gateway) card(p Project, url string) *a2a.AgentCard {
	skills := make([]a2a.AgentSkill, 0, len(p.Skills))
	for _, s := range p.Skills {
		tags := s.Tags
		if tags == nil {
			tags = []string{}
		}
		skills = append(skills, a2a.AgentSkill{ID: s.ID, Name: s.Name, Description: s.Description, Tags: tags})
	}
	v0 := a2a.NewAgentInterface(url, a2a.TransportProtocolJSONRPC)
	v0.ProtocolVersion = a2av0.Version
	card := &a2a.AgentCard{
		Name:        p.ID,
		Description: p.Description,
		Version:     "1",
		SupportedInterfaces: []*a2a.AgentInterface{
			a2a.NewAgentInterface(url, a2a.TransportProtocolJSONRPC),
			v0,
		},
		Capabilities:       a2a.AgentCapabilities{Streaming: true},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain", "application/json"},
		Skills:             skills,
	}
	if g.opts.BearerAuth {
		card.SecuritySchemes = a2a.NamedSecuritySchemes{
			BearerScheme: a2a.HTTPAuthSecurityScheme{Scheme: "Bearer", Description: "the token of the jido-bus HTTP front door (serve --http-token-env)"},
		}
		card.SecurityRequirements = a2a.SecurityRequirementsOptions{{BearerScheme: a2a.SecuritySchemeScopes{}}}
	}
	return card
}
