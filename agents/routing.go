package agents

import (
	"github.com/jido-bus/jido-bus/bus"
)

// Route turns sig into the instruction the agent runs for it: the action
// of the first matching route (most specific pattern, then priority, then
// registration order; agent routes register before skill routes), with the
// signal's data as params and the signal as origin. ok is false when no
// route matches.
func (d *Definition) Route(sig bus.Signal) (in Instruction, ok bool) {
	rt, ok := d.router.First(sig.Type())
	if !ok {
		return Instruction{}, false
	}
	return Instruction{Action: rt.Target, Params: sig.Data(), Origin: OriginOf(sig)}, true
}

// routeFrom is Route for a caller that holds OriginOf(sig) already.
func (d *Definition) routeFrom(sig bus.Signal, origin Origin) (in Instruction, ok bool) {
	rt, ok := d.router.First(sig.Type())
	if !ok {
		return Instruction{}, false
	}
	return Instruction{Action: rt.Target, Params: sig.Data(), Origin: origin}, true
}

// transformsResults reports whether a skill of the agent type has a
// TransformResult hook.
func (d *Definition) transformsResults() bool {
	for _, inst := range d.skills {
		if inst.skill.TransformResult != nil {
			return true
		}
	}
	return false
}

// matchingSkills returns, in attachment order, the skills that have the
// hook has selects and a signal pattern matching signalType.
func (d *Definition) matchingSkills(signalType string, has func(Skill) bool) []*skillInstance {
	var out []*skillInstance
	for _, inst := range d.skills {
		if !has(inst.skill) {
			continue
		}
		for _, p := range inst.patterns {
			if bus.MatchPattern(p, signalType) {
				out = append(out, inst)
				break
			}
		}
	}
	return out
}
