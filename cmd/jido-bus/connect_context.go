package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// natsContext is the part of a NATS CLI context file
// (<config>/nats/context/NAME.json, written by 'nats context save') that
// jido-bus uses. The file is read here rather than through jsm.go's
// natscontext package: that module is not among the pinned dependencies,
// brings the JetStream management library and its dependencies with it,
// and needs nothing from it but these few JSON members.
type natsContext struct {
	URL         string `json:"url"`
	User        string `json:"user"`
	Password    string `json:"password"`
	Token       string `json:"token"`
	Creds       string `json:"creds"`
	NKey        string `json:"nkey"`
	Cert        string `json:"cert"`
	Key         string `json:"key"`
	CA          string `json:"ca"`
	InboxPrefix string `json:"inbox_prefix"`
	TLSFirst    bool   `json:"tls_first"`

	// Settings jido-bus cannot honour; a context using one is refused
	// rather than half used.
	NSC        string `json:"nsc"`
	UserJWT    string `json:"user_jwt"`
	SocksProxy string `json:"socks_proxy"`
}

// natsConfigDir is where the NATS CLI keeps its settings:
// $XDG_CONFIG_HOME/nats, or ~/.config/nats.
func natsConfigDir() (string, error) {
	if dir := os.Getenv("XDG_CONFIG_HOME"); dir != "" {
		return filepath.Join(dir, "nats"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".config", "nats"), nil
}

// selectedNATSContext is the context 'nats context select' chose, or "".
func selectedNATSContext() string {
	dir, err := natsConfigDir()
	if err != nil {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(dir, "context.txt"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// loadNATSContext reads the context called name, with "~" and environment
// variables in its file paths expanded as the NATS CLI does.
func loadNATSContext(name string) (natsContext, error) {
	var c natsContext
	if name == "" || strings.Contains(name, "..") || strings.ContainsRune(name, os.PathSeparator) {
		return c, errors.New("not a context name")
	}
	dir, err := natsConfigDir()
	if err != nil {
		return c, err
	}
	path := filepath.Join(dir, "context", name+".json")
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return c, fmt.Errorf("no such NATS context (no %s; 'nats context ls' lists them)", path)
	}
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return c, fmt.Errorf("%s: %w", path, err)
	}
	for what, v := range map[string]string{"nsc": c.NSC, "user_jwt": c.UserJWT, "socks_proxy": c.SocksProxy} {
		if v != "" {
			return c, fmt.Errorf("%s sets %s, which jido-bus does not support; use a creds file (creds) instead", path, what)
		}
	}
	c.Creds = os.ExpandEnv(c.Creds)
	for _, p := range []*string{&c.Creds, &c.NKey, &c.Cert, &c.Key, &c.CA} {
		*p = expandHome(*p)
	}
	return c, nil
}

// expandHome replaces a leading "~" with the home directory.
func expandHome(path string) string {
	if !strings.HasPrefix(path, "~") {
		return path
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return path
	}
	return home + path[1:]
}
