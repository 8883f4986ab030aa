package main

import (
	"strings"

	"github.com/jido-bus/jido-bus/projects"
)

// openRequests turns serve --open's PATH or PATH=ID into the node's list
// of projects to open.
func openRequests(specs []string) []projects.OpenRequest {
	var out []projects.OpenRequest
	for _, spec := range specs {
		path, id, _ := strings.Cut(spec, "=")
		out = append(out, projects.OpenRequest{Root: path, ID: id})
	}
	return out
}
