package uitest

import (
	"context"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkclient "go.temporal.io/sdk/client"

	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/testbin"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/worker"
)

// markupURL is an authorization URL whose query carries markup that runs if a page renders it:
// a script element and an image whose onerror sets window.__consentMarkupRan.
const markupURL = `https://idp.example/authorize?state=ui-1&note=<script>window.__consentMarkupRan=1</script><img src=x onerror="window.__consentMarkupRan=1">`

// consentAlways is a credential source whose principals never have a token: every call asks for
// consent at markupURL.
type consentAlways struct{}

func (consentAlways) AccessToken(_ context.Context, req toolcore.CredentialRequest) (string, error) {
	return "", &toolcore.ConsentRequiredError{Provider: req.Credential.Provider, Scopes: req.Credential.Scopes,
		URL: markupURL, Expires: time.Now().Add(time.Hour)}
}

// TestWebUIShowsConsentWaitEscaped opens the page of a call waiting for its principal's consent
// (the real ToolCallWorkflow, on a worker of this process whose credential source has no token)
// in Chromium: its User Metadata tab's current details name the principal and provider and show the authorization
// URL as text, the markup in its query included, and nothing of it runs (issue 33). The
// screenshot is ui-consent-call.png in the artifacts.
func TestWebUIShowsConsentWaitEscaped(t *testing.T) {
	if testing.Short() {
		t.Skip("web UI: builds toolgate, starts a Temporal server and a Chromium")
	}
	root := moduleRoot(t)
	bin, err := testbin.Toolgate()
	require.NoError(t, err)
	dev := startDev(t, bin)
	c, err := sdkclient.Dial(sdkclient.Options{HostPort: dev.frontend, Namespace: dev.namespace})
	require.NoError(t, err)
	t.Cleanup(c.Close)

	type noArgs struct{}
	reg, err := toolcore.NewRegistry(toolcore.MustDefine(toolcore.Definition[noArgs]{
		Name:        "read_repo",
		Description: "Read a repository with the principal's GitHub token.",
		Execute: func(ctx context.Context, _ noArgs) (any, error) {
			_, err := toolcore.AccessToken(ctx, "github")
			return "read", err
		},
		Options: toolcore.Options{SideEffect: toolcore.ReadOnly, ConsentTimeout: time.Hour,
			Credentials: []toolcore.Credential{{Provider: "github", Scopes: []string{"repo"}}}},
	}))
	require.NoError(t, err)
	const queue = "ui-consent"
	w, err := worker.New(c, dev.namespace, reg, worker.Options{TaskQueue: queue, Credentials: consentAlways{}})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)

	tg := client.New(c, client.Options{TaskQueue: queue, Namespace: dev.namespace})
	call, err := toolcore.NewToolCall("ui-consent", "read_repo", []byte(`{}`))
	require.NoError(t, err)
	alice := toolcore.Principal{Issuer: "https://idp.example", Subject: "alice"}
	wid, err := tg.Start(client.WithPrincipal(t.Context(), alice), call)
	require.NoError(t, err)
	deadline := time.Now().Add(pageTimeout)
	for {
		st, err := tg.Status(t.Context(), "ui-consent")
		require.NoError(t, err)
		if st.Consent != nil && st.Consent.Request.URL != "" {
			assert.Equal(t, markupURL, st.Consent.Request.URL)
			break
		}
		require.True(t, time.Now().Before(deadline), "the call did not wait for consent: %+v", st)
		<-time.After(100 * time.Millisecond) // the next look at a call whose attempt is under way
	}

	tab := startBrowser(t)
	artifacts := artifactDir(t, root)
	page := dev.ui + "/namespaces/" + url.PathEscape(dev.namespace) + "/workflows/" + url.PathEscape(wid)
	got, err := waitForPage[consentDetails](t, tab, page, consentDetailsFunc, filepath.Join(artifacts, "ui-consent-call.png"),
		[]string{"awaiting consent of", "github", `<script>window.__consentMarkupRan=1</script><img src=x onerror="window.__consentMarkupRan=1">`})
	require.NoError(t, err, "the URL shown as text, its markup included")
	assertNoRawControls(t, got.Text)
	assert.False(t, got.Markup, "nothing of the URL became an element: %s", got.Text)
	ran, err := chromedp.Run(tab, chromedp.Evaluate[bool](`window.__consentMarkupRan === 1`))
	require.NoError(t, err)
	assert.False(t, ran || got.Ran, "nothing of the URL ran in the page")
}

// consentDetails is what consentDetailsFunc read of the current details.
type consentDetails struct {
	Text   string `json:"text"`
	Markup bool   `json:"markup"` // the URL's script or image became an element
	Ran    bool   `json:"ran"`    // it ran in the details' frame
}

// consentDetailsFunc opens the User Metadata tab and returns the current details once their text
// holds every string of wants, and null until then. The UI renders them (Markdown) in a frame of
// their own: its document, or its srcdoc parsed without running anything.
const consentDetailsFunc = `(wants) => {
	for (const el of document.querySelectorAll('[role="tab"], a, button')) {
		if (el.innerText && el.innerText.trim() === "User Metadata" && el.getAttribute("aria-selected") !== "true") {
			el.click();
			break;
		}
	}
	const docs = [document];
	for (const f of document.querySelectorAll("iframe")) {
		let doc = null;
		try { doc = f.contentDocument; } catch (e) {}
		if ((!doc || !doc.body || !doc.body.textContent) && f.srcdoc) {
			doc = new DOMParser().parseFromString(f.srcdoc, "text/html");
		}
		if (doc && doc.body) docs.push(doc);
	}
	for (const doc of docs) {
		const text = doc.body ? doc.body.textContent : "";
		if (!wants.every((w) => text.includes(w))) continue;
		const markup = [...doc.querySelectorAll("script")].some((s) => s.textContent.includes("__consentMarkupRan")) ||
			doc.querySelector("img[onerror]") !== null;
		let ran = false;
		try { ran = doc.defaultView !== null && doc.defaultView.__consentMarkupRan === 1; } catch (e) {}
		return {text, markup, ran};
	}
	return null;
}`
