package projectapi

import (
	"context"
	"errors"
	"fmt"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/natsbus"
	"github.com/jido-bus/jido-bus/projects"
	"github.com/jido-bus/jido-bus/projects/tools"
)

// How many requests of the slow verbs run at once; past it a request is
// refused with queue_overflow. A tool call's own project bounds what
// really runs (its runner's slots); this bounds the waiting.
const (
	maxOpensInFlight = 8
	maxCallsInFlight = 256
)

// Serve answers <prefix>.api.project.<verb> requests from e on b, through
// the same handler path as every control-plane area (natsbus.HandleAPI).
// The quick verbs are served one at a time per verb; open, reload and
// tool.call, which read files and run tools, each on a goroutine of its
// own.
func Serve(b *natsbus.Bus, e *projects.Engine) error {
	s := b.Subjects()
	serial := map[string]natsbus.APIFunc{
		VerbList: natsbus.Typed(func(context.Context, struct{}) (ListReply, error) {
			return ListReply{Projects: e.List()}, nil
		}),
		VerbGet: natsbus.Typed(func(_ context.Context, r ProjectRequest) (ProjectInfo, error) {
			if err := named(r.Project); err != nil {
				return ProjectInfo{}, err
			}
			return e.Get(r.Project)
		}),
		VerbTools: natsbus.Typed(func(_ context.Context, r ProjectRequest) (ToolsReply, error) {
			if err := named(r.Project); err != nil {
				return ToolsReply{}, err
			}
			ts, err := e.ToolDetails(r.Project)
			return ToolsReply{Tools: ts, MCPServers: e.MCPServers(r.Project)}, err
		}),
		VerbAssets: natsbus.Typed(func(_ context.Context, r AssetsRequest) (AssetsReply, error) {
			if err := named(r.Project); err != nil {
				return AssetsReply{}, err
			}
			return e.Assets(r)
		}),
		VerbDiagnostics: natsbus.Typed(func(_ context.Context, r ProjectRequest) (DiagnosticsReply, error) {
			if err := named(r.Project); err != nil {
				return DiagnosticsReply{}, err
			}
			d, err := e.Diagnostics(r.Project)
			return DiagnosticsReply{Diagnostics: d}, err
		}),
		VerbClose: natsbus.Typed(func(ctx context.Context, r CloseRequest) (CloseReply, error) {
			if err := named(r.Project); err != nil {
				return CloseReply{}, err
			}
			return CloseReply{Project: r.Project}, e.CloseProject(ctx, r.Project, r.Reason)
		}),
	}
	for verb, fn := range serial {
		if err := b.HandleAPI(s.API(Area, verb), fn); err != nil {
			return fmt.Errorf("project API: %w", err)
		}
	}
	concurrent := []struct {
		verb string
		max  int
		fn   natsbus.APIFunc
	}{
		{VerbOpen, maxOpensInFlight, natsbus.Typed(func(ctx context.Context, r OpenRequest) (ProjectInfo, error) {
			if r.Root == "" {
				return ProjectInfo{}, bus.Errorf(bus.ReasonInvalidRequest, `request names no root: send {"root":"/path/to/project"}`)
			}
			return e.Open(ctx, r)
		})},
		{VerbReload, maxOpensInFlight, natsbus.Typed(func(ctx context.Context, r ProjectRequest) (ReloadReply, error) {
			if err := named(r.Project); err != nil {
				return ReloadReply{}, err
			}
			return e.Reload(ctx, r.Project)
		})},
		{VerbToolCall, maxCallsInFlight, natsbus.Typed(func(ctx context.Context, r ToolCallRequest) (ToolCallReply, error) {
			return call(ctx, e, r)
		})},
	}
	for _, c := range concurrent {
		if err := b.HandleAPIConcurrent(s.API(Area, c.verb), c.max, c.fn); err != nil {
			return fmt.Errorf("project API: %w", err)
		}
	}
	return nil
}

func named(project string) error {
	if project == "" {
		return bus.Errorf(bus.ReasonInvalidRequest, `request names no project: send {"project":"<project-id>"} (project ls lists them)`)
	}
	return nil
}

func call(ctx context.Context, e *projects.Engine, r ToolCallRequest) (ToolCallReply, error) {
	if err := named(r.Project); err != nil {
		return ToolCallReply{}, err
	}
	if r.Name == "" {
		return ToolCallReply{}, bus.Errorf(bus.ReasonInvalidRequest, `request names no tool: send {"project":%q,"name":"read_file","args":{…}} (project tools lists them)`, r.Project)
	}
	res, err := e.CallTool(ctx, r.Project, tools.ToolCall{ID: r.ID, Name: r.Name, Args: r.Args})
	if err != nil {
		if te, ok := errors.AsType[*tools.Error](err); ok {
			// The runner's type is the reply's: denied, outside_root, …
			return ToolCallReply{}, &bus.Error{Type: te.Type, Message: fmt.Sprintf("call %s: %s", res.CallID, te.Message)}
		}
		return ToolCallReply{}, err
	}
	return ToolCallReply{CallID: res.CallID, Data: res.Data, Artifacts: res.Artifacts, Logs: res.Logs}, nil
}
