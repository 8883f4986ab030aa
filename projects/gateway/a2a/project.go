package a2a

import (
	"fmt"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/projects"
	"github.com/jido-bus/jido-bus/projects/assets"
)

// ProjectOf describes open project id of engine e for Host.Project: its
// commands, workflows and skills are the card's skills.
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
	p := Project{ID: id, Description: fmt.Sprintf("jido-bus project %s: a coding assistant working on the project's files with its tools, commands, workflows and skills", id)}
	// A skill's id is the name of the tool that runs the asset
	// (<kind>_<name>), the one name an asset has everywhere.
	for _, c := range listed.Commands {
		p.Skills = append(p.Skills, Skill{ID: assets.ToolName(assets.KindCommand, c.Name), Name: c.Name, Description: c.Description, Tags: []string{"command"}})
	}
	for _, w := range listed.Workflows {
		p.Skills = append(p.Skills, Skill{ID: assets.ToolName(assets.KindWorkflow, w.Name), Name: w.Name, Description: w.Description, Tags: []string{"workflow"}})
	}
	for _, s := range listed.Skills {
		p.Skills = append(p.Skills, Skill{ID: assets.ToolName(assets.KindSkill, s.Name), Name: s.Name, Description: s.Description, Tags: []string{"skill"}})
	}
	return p, nil
}
