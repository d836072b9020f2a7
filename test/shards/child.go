package shards

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"time"

	"go.uber.org/zap/zapcore"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/internal/managerlog"
	"github.com/loadout-dev/loadout/internal/shard"
)

// Stats is what a manager process reports to the scale harness.
type Stats struct {
	Shard   string `json:"shard"`
	Leading bool   `json:"leading"`
	// ConfigMapWrites and StatusWrites count context ConfigMap creates and
	// patches, and Workspace status patches, since the process started.
	ConfigMapWrites int `json:"configMapWrites"`
	StatusWrites    int `json:"statusWrites"`
	// OtherWrites counts every other mutating request but the Lease's and
	// Events.
	OtherWrites int `json:"otherWrites"`
	// HeapAfterGC is the live heap right after a forced collection.
	HeapAfterGC uint64 `json:"heapAfterGC"`
	// Owned lists "namespace/name" of the Workspaces in the process's cache.
	Owned     []string `json:"owned"`
	Uncovered float64  `json:"uncovered"`
	Overlap   float64  `json:"overlap"`
	Selector  []string `json:"selectorKinds"`
}

// Stats reads the manager's numbers; gc forces a collection first.
func (m *Manager) Stats(ctx context.Context, gc bool) (*Stats, error) {
	s := &Stats{}
	if m.Owner != nil {
		s.Shard = m.Owner.Shard.Name
		s.Leading = m.Owner.Leading(time.Now())
		s.Selector = m.Owner.SelectorKinds()
		if c, ok := m.Watcher.Last(); ok {
			s.Uncovered, s.Overlap = c.Uncovered, c.Overlap
		}
	}
	for k, n := range m.Writes.Matching("") {
		switch {
		case strings.Contains(k, "/leases") || strings.Contains(k, "/events"):
		case strings.Contains(k, "/configmaps"):
			s.ConfigMapWrites += n
		case strings.Contains(k, "/workspaces/") && strings.HasSuffix(k, "/status"):
			s.StatusWrites += n
		default:
			s.OtherWrites += n
		}
	}
	if s.Leading || m.Owner == nil {
		var list v1alpha1.WorkspaceList
		if err := m.Client.List(ctx, &list); err != nil {
			return nil, err
		}
		for _, ws := range list.Items {
			s.Owned = append(s.Owned, ws.Namespace+"/"+ws.Name)
		}
		sort.Strings(s.Owned)
	}
	if gc {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		s.HeapAfterGC = ms.HeapAlloc
		if dir := os.Getenv("LOADOUT_SHARDS_HEAP_DIR"); dir != "" {
			// What the live heap holds, for `go tool pprof`: one profile
			// per process and measurement, named by shard, pid and time.
			if err := writeHeapProfile(filepath.Join(dir, fmt.Sprintf("%s-%d-%d.pprof", cmp.Or(s.Shard, "all"), os.Getpid(), time.Now().UnixMilli()))); err != nil {
				return nil, err
			}
		}
	}
	return s, nil
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// RunChild runs one manager process for the scale harness: it starts the
// manager against the cluster of kubeconfig, prints the address of its
// stats endpoint (GET /stats, ?gc=1) on stdout, and runs until killed or
// its stdin closes.
func RunChild(kubeconfig, planFile, shardName string, mode shard.Mode, qps float32, burst, workers int) error {
	ctrl.SetLogger(managerlog.New(zap.Options{Level: zapcore.ErrorLevel})) // cmd/manager's logger
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	o := Options{Shard: shardName, Mode: mode, QPS: qps, Burst: burst, Concurrency: workers}
	if planFile != "" {
		b, err := os.ReadFile(planFile)
		if err != nil {
			return err
		}
		if o.Plan, err = shard.ParsePlan(b); err != nil {
			return err
		}
	}
	m, err := Start(cfg, o)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/stats", func(w http.ResponseWriter, r *http.Request) {
		s, err := m.Stats(r.Context(), r.URL.Query().Get("gc") == "1")
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		_ = json.NewEncoder(w).Encode(s)
	})
	go func() { _ = http.Serve(ln, mux) }()
	fmt.Println(ln.Addr().String())
	// The parent closes stdin to stop the process cleanly (releasing the
	// Lease), or kills it.
	done := make(chan struct{})
	go func() {
		buf := make([]byte, 1)
		for {
			if _, err := os.Stdin.Read(buf); err != nil {
				close(done)
				return
			}
		}
	}()
	select {
	case <-done:
		return m.Stop()
	case <-m.Done():
		return m.Err()
	}
}
