package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// tableAccept asks the API server to render a list as a Table, the way
// kubectl get does; the columns are the CRDs' printer columns.
const tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"

// printCategoryTable prints what `kubectl get <category> -A` prints, using the
// server-side Table rendering: for each namespaced resource of the category, a
// table with NAMESPACE, NAME as kind.group/name, and the columns of priority 0.
func printCategoryTable(ctx context.Context, cfg *rest.Config, category string, w io.Writer) error {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	lists, err := dc.ServerPreferredNamespacedResources()
	if err != nil {
		return fmt.Errorf("discovering the resources of category %q: %w", category, err)
	}
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	type match struct{ groupVersion, resource, kind string }
	var matches []match
	for _, list := range lists {
		for _, r := range list.APIResources {
			if slices.Contains(r.Categories, category) && !strings.Contains(r.Name, "/") {
				matches = append(matches, match{list.GroupVersion, r.Name, r.Kind})
			}
		}
	}
	// kubectl lists the kinds of a category in resource name order.
	slices.SortFunc(matches, func(a, b match) int { return strings.Compare(a.resource, b.resource) })
	printed := 0
	for _, m := range matches {
		table, err := getTable(ctx, httpClient, cfg.Host, m.groupVersion, m.resource)
		if err != nil {
			return err
		}
		if len(table.Rows) == 0 {
			continue
		}
		if printed > 0 {
			fmt.Fprintln(w)
		}
		printed++
		group, _, _ := strings.Cut(m.groupVersion, "/")
		writeTable(w, table, strings.ToLower(m.kind)+"."+group, 0)
	}
	if printed == 0 {
		fmt.Fprintln(w, "No resources found")
	}
	return nil
}

func getTable(ctx context.Context, c *http.Client, host, groupVersion, resource string) (*metav1.Table, error) {
	url := strings.TrimRight(host, "/") + "/apis/" + groupVersion + "/" + resource
	// A CRD installed moments ago may answer 429 while its storage
	// initializes: wait as the API server asks, a few times.
	for try := 1; ; try++ {
		t, retryAfter, err := getTableOnce(ctx, c, url)
		if retryAfter == 0 || try == maxTableTries {
			return t, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(retryAfter):
		}
	}
}

// maxTableTries bounds the tries of one table listing answered 429.
const maxTableTries = 10

// getTableOnce lists url as a Table; retryAfter is set when the API server
// answered 429 and said when to try again.
func getTableOnce(ctx context.Context, c *http.Client, url string) (_ *metav1.Table, retryAfter time.Duration, _ error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Accept", tableAccept)
	resp, err := c.Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("listing %s: %w", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, 0, fmt.Errorf("listing %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		err := fmt.Errorf("listing %s: %s: %s", url, resp.Status, strings.TrimSpace(string(body)))
		if resp.StatusCode == http.StatusTooManyRequests {
			retryAfter = time.Second
			if n, perr := strconv.Atoi(resp.Header.Get("Retry-After")); perr == nil && n > 0 && n <= 10 {
				retryAfter = time.Duration(n) * time.Second
			}
		}
		return nil, retryAfter, err
	}
	var t metav1.Table
	if err := json.Unmarshal(body, &t); err != nil {
		return nil, 0, fmt.Errorf("listing %s: not a Table: %w", url, err)
	}
	return &t, 0, nil
}

// printResourceTable prints what `kubectl get <resource> -A -o wide`
// prints, from the same server-side Table.
func printResourceTable(ctx context.Context, cfg *rest.Config, w io.Writer, groupVersion, resource string) error {
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	table, err := getTable(ctx, httpClient, cfg.Host, groupVersion, resource)
	if err != nil {
		return err
	}
	if len(table.Rows) == 0 {
		fmt.Fprintln(w, "No resources found")
		return nil
	}
	writeTable(w, table, "", 1)
	return nil
}

// writeTable prints one kind's rows like kubectl: upper-case headers, the
// object's namespace first, its name prefixed with kind.group unless
// kindGroup is empty, the columns up to priority maxPriority (1: -o wide).
func writeTable(w io.Writer, t *metav1.Table, kindGroup string, maxPriority int32) {
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	defer tw.Flush()
	var cols []int
	headers := []string{"NAMESPACE"}
	for i, c := range t.ColumnDefinitions {
		if c.Priority <= maxPriority {
			cols = append(cols, i)
			headers = append(headers, strings.ToUpper(c.Name))
		}
	}
	fmt.Fprintln(tw, strings.Join(headers, "\t"))
	for _, row := range t.Rows {
		var meta metav1.PartialObjectMetadata
		if row.Object.Raw != nil {
			_ = json.Unmarshal(row.Object.Raw, &meta)
		}
		cells := []string{meta.Namespace}
		for _, i := range cols {
			var v any
			if i < len(row.Cells) {
				v = row.Cells[i]
			}
			s := ""
			if v != nil {
				s = fmt.Sprint(v)
			}
			if t.ColumnDefinitions[i].Name == "Name" && kindGroup != "" {
				s = kindGroup + "/" + s
			}
			cells = append(cells, s)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
}
