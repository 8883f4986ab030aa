package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// Compose runs docker and the compose command against one project. Every
// container it touches belongs to that project, so the smoke never
// touches anything else on the engine.
type Compose struct {
	Command []string // "docker compose" or "docker-compose", split
	Files   []string
	Project string
}

func (c Compose) args(a ...string) []string {
	out := append([]string{}, c.Command[1:]...)
	for _, f := range c.Files {
		out = append(out, "-f", f)
	}
	return append(append(out, "-p", c.Project), a...)
}

// Run runs the compose command with args and returns its combined output.
func (c Compose) Run(ctx context.Context, args ...string) (string, error) {
	return output(ctx, c.Command[0], c.args(args...)...)
}

// Container returns the id of service's container (running or not).
func (c Compose) Container(ctx context.Context, service string) (string, error) {
	out, err := output(ctx, "docker", "ps", "-aq",
		"--filter", "label=com.docker.compose.project="+c.Project,
		"--filter", "label=com.docker.compose.service="+service)
	if err != nil {
		return "", err
	}
	ids := strings.Fields(out)
	if len(ids) != 1 {
		return "", fmt.Errorf("service %s of project %s: %d containers (%q), want 1", service, c.Project, len(ids), out)
	}
	return ids[0], nil
}

// Exec runs argv in service's container and returns its stdout; the
// error carries stderr.
func (c Compose) Exec(ctx context.Context, service string, argv ...string) ([]byte, error) {
	id, err := c.Container(ctx, service)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, "docker", append([]string{"exec", id}, argv...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("%s in %s: %w: %s", strings.Join(argv, " "), service, err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// Health returns service's container state: "healthy", "starting",
// "unhealthy", or the container's status when it is not running.
func (c Compose) Health(ctx context.Context, service string) (string, error) {
	id, err := c.Container(ctx, service)
	if err != nil {
		return "", err
	}
	out, err := output(ctx, "docker", "inspect", "-f", "{{.State.Status}} {{if .State.Health}}{{.State.Health.Status}}{{end}}", id)
	if err != nil {
		return "", err
	}
	status, health, _ := strings.Cut(strings.TrimSpace(out), " ")
	if status != "running" || health == "" {
		return status, nil
	}
	return health, nil
}

// WaitHealthy polls until every service is healthy, or ctx ends; the
// error names those that are not, with their last state.
func (c Compose) WaitHealthy(ctx context.Context, services ...string) error {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	last := map[string]string{}
	for {
		var waiting []string
		for _, s := range services {
			h, err := c.Health(ctx, s)
			if ctx.Err() != nil {
				break // the error is the deadline's, not the service's
			}
			if err != nil {
				h = err.Error()
			}
			last[s] = h
			if h != "healthy" {
				waiting = append(waiting, s)
			}
		}
		if len(waiting) == 0 && ctx.Err() == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			var states []string
			for _, s := range services {
				if last[s] != "healthy" {
					states = append(states, fmt.Sprintf("%s (%s)", s, last[s]))
				}
			}
			return fmt.Errorf("not healthy in time: %s (docker logs of the container say why)", strings.Join(states, ", "))
		case <-tick.C:
		}
	}
}

func output(ctx context.Context, name string, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) || ctx.Err() != nil {
			return string(out), fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out), fmt.Errorf("%s: %w", name, err)
	}
	return string(out), nil
}
