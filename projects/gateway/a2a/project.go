package a2a

import (
	"fmt"
	"strings"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/projects"
	"github.com/jido-bus/jido-bus/projects/assets"
)

// ProjectOf describes open project id of engine e for Host.Project: its
// commands, workflows and skills are the card's skills, and the card's
// description names its other tools — only what the project's policy
// lets run: an asset whose tool the policy denies is not offered.
func ProjectOf(e *projects.Engine, id string) (Project, error) {
	info, err := e.Get(id)
	if err != nil {
		return Project{}, err
	}
	if info.Status != projects.StatusOpen {
		return Project{}, bus.Errorf(bus.ReasonUnavailable, "project %s is not usable (%s): jido-bus project ls says why", id, info.Status)
	}
	listed, err := e.Assets(projects.AssetsRequest{Project: id})
	if err != nil {
		return Project{}, err
	}
	specs, err := e.Tools(id) // the catalog as the policy filters it
	if err != nil {
		return Project{}, err
	}
	allowed := make(map[string]bool, len(specs))
	for _, s := range specs {
		allowed[s.Name] = true
	}
	p := Project{ID: id}
	// A skill's id is the name of the tool that runs the asset
	// (<kind>_<name>), the one name an asset has everywhere.
	add := func(kind, name, description string) {
		if tool := assets.ToolName(kind, name); allowed[tool] {
			p.Skills = append(p.Skills, Skill{ID: tool, Name: name, Description: description, Tags: []string{kind}})
			delete(allowed, tool)
		}
	}
	for _, c := range listed.Commands {
		add(assets.KindCommand, c.Name, c.Description)
	}
	for _, w := range listed.Workflows {
		add(assets.KindWorkflow, w.Name, w.Description)
	}
	for _, s := range listed.Skills {
		add(assets.KindSkill, s.Name, s.Description)
	}
	var toolNames []string
	for _, s := range specs {
		if allowed[s.Name] {
			toolNames = append(toolNames, s.Name)
		}
	}
	p.Description = fmt.Sprintf("jido-bus project %s: a coding assistant working on the project's files with its tools (%s), commands, workflows and skills", id, strings.Join(toolNames, ", "))
	return p, nil
}
