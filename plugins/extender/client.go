package extender

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// maxBodySize bounds a response body, as Volcano does (10 MiB).
const maxBodySize = 10 << 20

// send POSTs req as JSON to urlPrefix/verb and decodes the response into resp (nil: the body
// is discarded). A transport error, a timeout (extender.httpTimeout covers the whole call),
// a status other than 200 or an undecodable body is an error.
func (p *plugin) send(verb string, req, resp any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("%s: encode request: %w", verb, err)
	}
	url := strings.TrimRight(p.cfg.urlPrefix, "/") + "/" + verb
	hreq, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s: %w", verb, err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	hresp, err := p.client.Do(hreq)
	if err != nil {
		return fmt.Errorf("%s: %w", verb, err)
	}
	defer hresp.Body.Close()
	limited := io.LimitReader(hresp.Body, maxBodySize+1)
	if hresp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, limited)
		return fmt.Errorf("%s: extender at %s answered HTTP %d", verb, url, hresp.StatusCode)
	}
	data, err := io.ReadAll(limited)
	if err != nil {
		return fmt.Errorf("%s: read response: %w", verb, err)
	}
	if len(data) > maxBodySize {
		return fmt.Errorf("%s: response larger than %d bytes", verb, maxBodySize)
	}
	if resp == nil {
		return nil
	}
	if err := json.Unmarshal(data, resp); err != nil {
		return fmt.Errorf("%s: decode response: %w", verb, err)
	}
	return nil
}
