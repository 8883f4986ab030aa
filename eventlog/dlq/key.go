package dlq

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/jido-bus/jido-bus/bus/natsbus"
)

// KeyFile is where a node keeps the key of the digests that replace
// credentials in its dead letters (natsbus.Options.DigestKey), so that the
// same token has the same digest after a restart. It is a secret of the
// node's: with it, a password's digest could be checked against a list.
func KeyFile(dataDir string) string { return filepath.Join(dataDir, "deadletter.key") }

// LoadKey reads the node's digest key, making it (mode 0600) at the
// first start. The caller holds the data dir's lock, so no other node
// makes one meanwhile.
func LoadKey(dataDir string) ([]byte, error) {
	path := KeyFile(dataDir)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		key := natsbus.NewDigestKey()
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, []byte(hex.EncodeToString(key)+"\n"), 0o600); err != nil {
			return nil, fmt.Errorf("write the dead letters' digest key %s: %w (choose a --data-dir this user can write)", path, err)
		}
		if err := os.Rename(tmp, path); err != nil {
			return nil, fmt.Errorf("write the dead letters' digest key %s: %w", path, err)
		}
		return key, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the dead letters' digest key %s: %w", path, err)
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(data)))
	if err != nil || len(key) < 16 {
		return nil, fmt.Errorf("the dead letters' digest key %s is damaged: remove it and start again (a new key is made; credentials in dead letters filed from then on have other digests)", path)
	}
	return key, nil
}
