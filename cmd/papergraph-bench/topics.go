package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/topics"
	"github.com/papergraph/papergraph/vector"
)

// topicsReport is what papergraph-bench topics measures of the topics of
// an archive: how well they agree with the papers' arXiv primary
// categories, at each level; whether a rerun gives the same topics; and
// what an increment of the newest papers does.
type topicsReport struct {
	Papers      int     `json:"papers"`
	Model       string  `json:"model"`
	BuildS      float64 `json:"buildSeconds"` // the clustering alone, in memory
	Broad       int     `json:"broadTopics"`
	Within      int     `json:"topicsWithin"`
	NMI0        float64 `json:"nmiLevel0"`
	Purity0     float64 `json:"purityLevel0"`
	NMI1        float64 `json:"nmiLevel1"`
	Purity1     float64 `json:"purityLevel1"`
	Categories  int     `json:"primaryCategories"`
	RerunSame   bool    `json:"rerunIdentical"`
	Increment   int     `json:"incrementPapers"`
	KeptFiled   float64 `json:"existingUnchangedFiled"`
	KeptRebuilt float64 `json:"existingUnchangedRebuilt"`
	NMIRebuilt  float64 `json:"nmiBeforeAfterRebuild"`
	NewAgree    float64 `json:"newFiledAsRebuilt"`
	NewSim      float64 `json:"newMeanCosine"`
	OldSim      float64 `json:"existingMeanCosine"`
}

func cmdTopics(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("topics", stderr)
	dsn := fs.String("db", "", "an archive already imported and embedded (papergraph import), which is only read")
	inc := fs.Int("increment", 250, "the increment: the `N` newest papers by first version, filed into topics built from the rest")
	bdb, err := openArchive(fs, args, dsn)
	if err != nil {
		return err
	}
	defer bdb.Close()
	a, err := loadTopicArchive(ctx, bdb)
	if err != nil {
		return err
	}
	ids, vs := a.ids, a.vs
	r := topicsReport{Papers: len(ids), Model: a.model}

	start := time.Now()
	h := topics.ClusterVectors(vs)
	r.BuildS = time.Since(start).Seconds()
	again := topics.ClusterVectors(vs)
	r.RerunSame = slices.Equal(h.Top, again.Top) && slices.Equal(h.Sub, again.Sub)
	for _, t := range h.Topics {
		if t.Level == 0 {
			r.Broad++
		} else {
			r.Within++
		}
	}
	measureAgreement(&r, h, ids, a.category)
	measureIncrement(&r, h, ids, vs, a.published, *inc)
	out, _ := json.MarshalIndent(r, "", "  ")
	fmt.Fprintln(stdout, string(out))
	return nil
}

// topicArchive is what the topics measurement reads of an archive: each
// paper's normalised vector under the active model, its primary category
// and its first version's date.
type topicArchive struct {
	model     string
	ids       []int64
	vs        [][]float32
	category  map[int64]string
	published map[int64]time.Time
}

// loadTopicArchive reads bdb's vectors, categories and dates.
func loadTopicArchive(ctx context.Context, bdb *bun.DB) (topicArchive, error) {
	var ta topicArchive
	m, err := db.ActiveEmbeddingModel(ctx, bdb)
	if err != nil {
		return ta, err
	}
	if err := db.EachVectorToFile(ctx, bdb, m.Name, true, func(id, _ int64, v []float32) error {
		vector.Normalize(v)
		ta.ids, ta.vs = append(ta.ids, id), append(ta.vs, v)
		return nil
	}); err != nil {
		return ta, err
	}
	var rows []struct {
		ID        int64     `bun:"id"`
		Primary   string    `bun:"primary_category"`
		Published time.Time `bun:"published,nullzero"`
	}
	if err := bdb.NewRaw("SELECT id, COALESCE(primary_category, '') AS primary_category, published FROM papers ORDER BY id").Scan(ctx, &rows); err != nil {
		return ta, err
	}
	ta.model, ta.category, ta.published = m.Name, map[int64]string{}, map[int64]time.Time{}
	for _, r := range rows {
		ta.category[r.ID], ta.published[r.ID] = r.Primary, r.Published
	}
	return ta, nil
}

// measureAgreement sets r's agreement of the topics h with the papers'
// primary categories, at each level.
func measureAgreement(r *topicsReport, h topics.Hierarchy, ids []int64, cat map[int64]string) {
	var classes []string
	var top, sub, subClasses []int
	for i, id := range ids {
		if c := cat[id]; c != "" {
			classes, top = append(classes, c), append(top, h.Top[i])
			if h.Sub[i] >= 0 {
				subClasses, sub = append(subClasses, len(classes)-1), append(sub, h.Sub[i])
			}
		}
	}
	r.Categories = len(uniqueStrings(classes))
	r.NMI0, r.Purity0 = agreement(classes, top)
	subCls := make([]string, len(subClasses))
	for i, j := range subClasses {
		subCls[i] = classes[j]
	}
	r.NMI1, r.Purity1 = agreement(subCls, sub)

}

// measureIncrement sets r's stability figures: the newest inc papers
// (by date) filed into topics built from the others, against h, built
// from all.
func measureIncrement(r *topicsReport, h topics.Hierarchy, ids []int64, vs [][]float32, date map[int64]time.Time, inc int) {
	// The increment: the newest papers, filed into topics built from the
	// others, against a rebuild from all.
	order := make([]int, len(ids))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return date[ids[a]].Compare(date[ids[b]]) })
	n := min(inc, len(ids)/10)
	isNew := make([]bool, len(ids))
	for _, i := range order[len(order)-n:] {
		isNew[i] = true
	}
	var oldVs [][]float32
	var oldIdx []int
	for i := range ids {
		if !isNew[i] {
			oldVs, oldIdx = append(oldVs, vs[i]), append(oldIdx, i)
		}
	}
	before := topics.ClusterVectors(oldVs)
	r.Increment = n
	r.KeptFiled = 1 // filing moves no paper already filed
	// Each topic before maps to the rebuilt topic most of its papers are
	// in; a paper whose rebuilt topic is the image of its old one is
	// unchanged.
	overlap := map[[2]int]int{}
	var a, b []int
	for j, i := range oldIdx {
		overlap[[2]int{before.Top[j], h.Top[i]}]++
		a, b = append(a, before.Top[j]), append(b, h.Top[i])
	}
	image := map[int]int{}
	best := map[int]int{}
	for k, c := range overlap {
		if c > best[k[0]] || (c == best[k[0]] && k[1] < image[k[0]]) {
			best[k[0]], image[k[0]] = c, k[1]
		}
	}
	same := 0
	for j, i := range oldIdx {
		if image[before.Top[j]] == h.Top[i] {
			same++
		}
	}
	r.KeptRebuilt = float64(same) / float64(len(oldIdx))
	r.NMIRebuilt = nmiInts(a, b)
	agree := 0
	var newSim, oldSim float64
	for i := range ids {
		t, _ := topics.File(before.Topics, vs[i])
		s := float64(dotF(vs[i], before.Topics[t].Centroid))
		if isNew[i] {
			newSim += s
			if image[t] == h.Top[i] {
				agree++
			}
		} else {
			oldSim += s
		}
	}
	r.NewAgree = float64(agree) / float64(max(n, 1))
	r.NewSim, r.OldSim = newSim/float64(max(n, 1)), oldSim/float64(max(len(oldIdx), 1))
}

func dotF(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func uniqueStrings(xs []string) []string {
	ys := slices.Clone(xs)
	slices.Sort(ys)
	return slices.Compact(ys)
}

// agreement is the normalised mutual information (by the square root of
// the entropies) of the classes and the clusters, and the purity of the
// clusters: the share of papers in their cluster's commonest class.
func agreement(classes []string, clusters []int) (nmi, purity float64) {
	index := map[string]int{}
	ys := make([]int, len(classes))
	for i, c := range classes {
		if _, ok := index[c]; !ok {
			index[c] = len(index)
		}
		ys[i] = index[c]
	}
	counts := map[[2]int]int{}
	for i := range ys {
		counts[[2]int{clusters[i], ys[i]}]++
	}
	most := map[int]int{}
	for k, c := range counts {
		most[k[0]] = max(most[k[0]], c)
	}
	for _, c := range most {
		purity += float64(c)
	}
	return nmiInts(clusters, ys), purity / float64(max(len(ys), 1))
}

// nmiInts is the normalised mutual information of two labellings.
func nmiInts(a, b []int) float64 {
	n := float64(len(a))
	if n == 0 {
		return 0
	}
	ca, cb, cab := map[int]float64{}, map[int]float64{}, map[[2]int]float64{}
	for i := range a {
		ca[a[i]]++
		cb[b[i]]++
		cab[[2]int{a[i], b[i]}]++
	}
	entropy := func(c map[int]float64) float64 {
		var h float64
		for _, x := range c {
			h -= x / n * math.Log(x/n)
		}
		return h
	}
	var mi float64
	for k, x := range cab {
		mi += x / n * math.Log(x*n/(ca[k[0]]*cb[k[1]]))
	}
	ha, hb := entropy(ca), entropy(cb)
	if ha == 0 || hb == 0 {
		return 0
	}
	return mi / math.Sqrt(ha*hb)
}
