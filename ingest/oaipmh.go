package ingest

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/papergraph/papergraph/retry"
)

// This file speaks OAI-PMH 2.0 (https://www.openarchives.org/OAI/openarchivesprotocol.html)
// as far as harvesting arXiv needs: ListRecords in the arXivRaw format,
// resumption tokens, the protocol's errors, and 503 with Retry-After, by
// which a repository asks a harvester to slow down.

// oaiPage is one response to ListRecords.
type oaiPage struct {
	XMLName      xml.Name
	ResponseDate string      `xml:"responseDate"`
	Errors       []oaiError  `xml:"error"`
	Records      []oaiRecord `xml:"ListRecords>record"`
	Token        struct {
		Value            string `xml:",chardata"`
		Cursor           string `xml:"cursor,attr"`
		CompleteListSize string `xml:"completeListSize,attr"`
	} `xml:"ListRecords>resumptionToken"`
}

// oaiError is an error the repository answered with instead of records.
type oaiError struct {
	Code    string `xml:"code,attr"`
	Message string `xml:",chardata"`
}

func (e oaiError) Error() string {
	return "OAI-PMH error " + e.Code + ": " + strings.TrimSpace(e.Message)
}

// oaiRecord is one record of a page: a header, and arXivRaw metadata
// unless the header says the record is deleted.
type oaiRecord struct {
	Header struct {
		Status     string `xml:"status,attr"`
		Identifier string `xml:"identifier"`
		Datestamp  string `xml:"datestamp"`
	} `xml:"header"`
	Raw *arxivRecord `xml:"metadata>arXivRaw"`
}

// The protocol errors a harvest handles rather than fails on.
const (
	oaiNoRecords = "noRecordsMatch"     // an empty window: nothing changed
	oaiBadToken  = "badResumptionToken" // expired: start the set again
)

// maxPageBytes bounds one response; a page of arXiv's 1,000 arXivRaw
// records is a few megabytes.
const maxPageBytes = 256 << 20

// retryAfterError is a 503 (or 429) that says how long to wait.
type retryAfterError struct{ wait time.Duration }

func (e *retryAfterError) Error() string {
	return fmt.Sprintf("the repository asks to retry after %s", e.wait)
}

// permanentError is a failure that asking again will not mend.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// listRecordsQuery is the query of a ListRecords request: the first of a
// set's window, or the next page of a list.
func listRecordsQuery(set, from, until, token string) url.Values {
	q := url.Values{"verb": {"ListRecords"}}
	if token != "" {
		q.Set("resumptionToken", token) // an exclusive argument
		return q
	}
	q.Set("metadataPrefix", "arXivRaw")
	for k, v := range map[string]string{"set": set, "from": from, "until": until} {
		if v != "" {
			q.Set(k, v)
		}
	}
	return q
}

// fetchPage asks base for one page. Errors that a retry may mend (the
// network, 5xx, a cut or garbled body) are returned as they are, a 503 or
// 429 with Retry-After as a *retryAfterError, others as *permanentError.
func fetchPage(ctx context.Context, client *http.Client, base, userAgent string, q url.Values) (*oaiPage, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"?"+q.Encode(), nil)
	if err != nil {
		return nil, &permanentError{err}
	}
	req.Header.Set("User-Agent", userAgent)
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusServiceUnavailable || resp.StatusCode == http.StatusTooManyRequests:
		if wait, ok := retry.After(resp.Header.Get("Retry-After"), time.Now()); ok {
			return nil, &retryAfterError{wait}
		}
		return nil, fmt.Errorf("HTTP %s", resp.Status)
	case resp.StatusCode >= 500:
		return nil, fmt.Errorf("HTTP %s", resp.Status)
	case resp.StatusCode != http.StatusOK:
		return nil, &permanentError{fmt.Errorf("HTTP %s", resp.Status)}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxPageBytes+1))
	if err != nil {
		return nil, err
	}
	if len(body) > maxPageBytes {
		return nil, &permanentError{fmt.Errorf("a page longer than %d bytes", maxPageBytes)}
	}
	var page oaiPage
	if err := xml.Unmarshal(body, &page); err != nil {
		return nil, fmt.Errorf("not an OAI-PMH response: %w", err)
	}
	if page.XMLName.Local != "OAI-PMH" {
		return nil, fmt.Errorf("not an OAI-PMH response: a <%s> document", page.XMLName.Local)
	}
	if page.ResponseDate == "" {
		return nil, errors.New("not an OAI-PMH response: no responseDate")
	}
	return &page, nil
}

// oaiDay returns the date of an OAI-PMH datestamp or responseDate
// ("2026-12-01" or "2026-12-01T10:58:49Z"), or "" if it is neither.
func oaiDay(s string) string {
	s = strings.TrimSpace(s)
	if len(s) < 10 {
		return ""
	}
	if _, err := time.Parse(time.DateOnly, s[:10]); err != nil {
		return ""
	}
	return s[:10]
}
