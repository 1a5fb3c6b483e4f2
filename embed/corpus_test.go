package embed_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// topics are the vocabularies of a small synthetic corpus: a paper is
// about one topic and draws most of its words from it.
var topics = [][]string{
	strings.Fields(`quark gluon hadron collider chromodynamics lepton boson meson baryon parton jet
		luminosity detector scattering cross section decay neutrino muon pion kaon`),
	strings.Fields(`neural network training gradient descent convolutional transformer attention layer dataset
		classification accuracy overfitting regularization embedding optimizer backpropagation batch epoch loss`),
	strings.Fields(`galaxy cluster redshift cosmological dark matter halo supernova telescope photometric survey
		quasar stellar luminous spectroscopic nebula accretion magnitude emission pulsar`),
	strings.Fields(`graph vertex edge coloring chromatic planar bipartite matching spanning tree clique
		hypergraph polynomial combinatorial conjecture theorem bound extremal ramsey`),
}

// common are words any paper may use.
var common = strings.Fields(`model analysis data measurement framework theory experiment sample
	approach performance simulation structure property process effect system`)

// corpusPaper is a synthetic paper: its topic and text.
type corpusPaper struct {
	ID, Title, Abstract string
	Topic               int
	Revised             bool // a second version, a day later
}

// corpus makes n papers, round the topics, the same for the same seed.
func corpus(n int, seed uint64) []corpusPaper {
	r := rand.New(rand.NewPCG(seed, 7))
	text := func(topic, words int) string {
		ws := make([]string, words)
		for i := range ws {
			if r.IntN(4) == 0 {
				ws[i] = common[r.IntN(len(common))]
			} else {
				ws[i] = topics[topic][r.IntN(len(topics[topic]))]
			}
		}
		return strings.Join(ws, " ")
	}
	ps := make([]corpusPaper, n)
	for i := range ps {
		t := i % len(topics)
		ps[i] = corpusPaper{ID: fmt.Sprintf("2101.%05d", i+1), Title: text(t, 8), Abstract: text(t, 60), Topic: t}
	}
	return ps
}

// writeKaggle writes papers in the Kaggle snapshot's format, for import.
func writeKaggle(t *testing.T, ps []corpusPaper) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "papers.jsonl")
	var b strings.Builder
	for _, p := range ps {
		versions := []map[string]string{{"version": "v1", "created": "Tue, 5 Jan 2021 10:00:00 GMT"}}
		updated := "2021-01-05"
		if p.Revised {
			versions = append(versions, map[string]string{"version": "v2", "created": "Wed, 6 Jan 2021 10:00:00 GMT"})
			updated = "2021-01-06"
		}
		line, err := json.Marshal(map[string]any{
			"id": p.ID, "title": p.Title, "abstract": p.Abstract, "authors": "A. Author",
			"categories": "hep-ph", "update_date": updated, "versions": versions,
		})
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
