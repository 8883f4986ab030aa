package jslog

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// serverCheckTimeout bounds reading the servers' settings at start.
const serverCheckTimeout = 10 * time.Second

// perServerTimeout bounds reading one server's settings.
const perServerTimeout = 3 * time.Second

// CheckCluster checks that the servers of the cluster nc is connected to
// keep what they acknowledge (CheckServers), reading their settings from
// their monitoring endpoints when monitorURLs are given (a majority must
// answer), else over $SYS (which needs a system account user).
func CheckCluster(ctx context.Context, nc *nats.Conn, monitorURLs []string, log interface{ Warn(string, ...any) }) error {
	ctx, cancel := context.WithTimeout(ctx, serverCheckTimeout)
	defer cancel()
	var servers []ServerSettings
	var err error
	if len(monitorURLs) > 0 {
		servers, err = fetchQuorum(ctx, monitorURLs, log)
	} else {
		servers, err = FetchServerSettingsSys(ctx, nc)
		if err != nil {
			err = fmt.Errorf("%w; or give the servers' monitoring URLs with --nats-monitor http://host:8222,…", err)
		}
	}
	if err != nil {
		return fmt.Errorf("cluster mode checks that every NATS server fsyncs each write before it acknowledges it: %w", err)
	}
	return CheckServers(servers)
}

// fetchQuorum reads the settings of the servers at urls, all at once and
// each within perServerTimeout, tolerating fewer than half of them down: a
// node must be able to start while a NATS server is away (the cluster's
// quorum holds without it; looking up a stopped container's name alone
// can take seconds), and a server that comes back with unsafe settings is
// caught at the next start.
func fetchQuorum(ctx context.Context, urls []string, log interface{ Warn(string, ...any) }) ([]ServerSettings, error) {
	type answer struct {
		s   []ServerSettings
		err error
	}
	answers := make([]answer, len(urls))
	var wg sync.WaitGroup
	for i, u := range urls {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, perServerTimeout)
			defer cancel()
			answers[i].s, answers[i].err = FetchServerSettings(ctx, []string{u})
		})
	}
	wg.Wait()
	var servers []ServerSettings
	var errs []error
	for _, a := range answers {
		if a.err != nil {
			errs = append(errs, a.err)
			continue
		}
		servers = append(servers, a.s...)
	}
	if len(servers) < len(urls)/2+1 {
		return nil, fmt.Errorf("%d of %d servers answered (a majority must): %w", len(servers), len(urls), errors.Join(errs...))
	}
	for _, err := range errs {
		log.Warn("a NATS server's settings could not be read; checked the others", "err", err)
	}
	return servers, nil
}
