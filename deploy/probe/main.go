// Command probe is the health check of the compose images. They are FROM
// scratch (no shell, no curl), so the check is this static binary: it
// GETs one URL on the container's own loopback and exits 0 when the
// answer is 2xx, 1 otherwise, printing why. With -print it also writes
// the body to stdout, which lets the compose smoke read nats-server's
// /jsz inside a container of an internal network.
//
//	probe 'http://127.0.0.1:8222/healthz?js-enabled-only=true'
//	probe http://127.0.0.1:9464/readyz
//	probe -print http://127.0.0.1:8222/jsz
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

func main() {
	fs := flag.NewFlagSet("probe", flag.ContinueOnError)
	printBody := fs.Bool("print", false, "write the body to stdout")
	timeout := fs.Duration("timeout", 3*time.Second, "give up after this long")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: probe [-print] [-timeout D] URL\nexits 0 when GET URL answers 2xx, 1 otherwise")
		fs.PrintDefaults()
	}
	if err := fs.Parse(os.Args[1:]); err != nil || fs.NArg() != 1 {
		fs.Usage()
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	body, err := get(ctx, fs.Arg(0))
	if *printBody {
		_, _ = os.Stdout.Write(body)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "probe:", err)
		os.Exit(1)
	}
}

// get fetches url and returns its body (at most 1 MiB, enough for /jsz
// and /readyz) and an error unless the status is 2xx; the error carries
// the start of the body, where nats-server and jido-bus say what is wrong.
func get(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return body, fmt.Errorf("GET %s: reading the body: %w", url, err)
	}
	if resp.StatusCode/100 != 2 {
		snippet := body
		if len(snippet) > 300 {
			snippet = snippet[:300]
		}
		return body, fmt.Errorf("GET %s: %s: %s", url, resp.Status, snippet)
	}
	return body, nil
}
