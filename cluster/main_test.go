package cluster

import (
	"os"
	"testing"

	"github.com/jido-bus/jido-bus/bus/natsserver/jstest"
)

// cluster is the 3-server cluster every test shares; each test joins
// members under a prefix of its own, so no two tests see each other's
// bucket.
var cluster *jstest.Cluster

func TestMain(m *testing.M) { os.Exit(jstest.Main(m, 3, &cluster)) }
