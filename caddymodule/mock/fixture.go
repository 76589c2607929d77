package mock

import (
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/louter/louter/translate"
)

// maxFixtureSize bounds a replayed file, which is read whole.
const maxFixtureSize = 64 << 20

// loadFixture reads a file of fixtures_dir. The name must stay inside the
// directory: os.Root refuses "..", absolute paths and symlinks that leave
// it, so a scenario header cannot read arbitrary files.
func (m *Mock) loadFixture(name string) ([]byte, *translate.Error) {
	if m.FixturesDir == "" {
		return nil, translate.BadRequest("louter_mock: scenario fixture=" + name + " needs fixtures_dir in the config")
	}
	root, err := os.OpenRoot(m.FixturesDir)
	if err != nil {
		return nil, translate.NewError(http.StatusInternalServerError, "louter_mock: opening fixtures_dir: "+err.Error())
	}
	defer root.Close()
	rel := filepath.FromSlash(name)
	info, err := root.Stat(rel)
	if err == nil && info.Size() > maxFixtureSize {
		return nil, translate.NewError(http.StatusInternalServerError, "louter_mock: fixture "+name+" is larger than 64 MiB")
	}
	var data []byte
	if err == nil {
		data, err = root.ReadFile(rel)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, translate.BadRequest("louter_mock: no fixture " + name + " in fixtures_dir")
	case err != nil:
		return nil, translate.BadRequest("louter_mock: fixture " + name + ": " + err.Error())
	}
	return data, nil
}

// fixtureContentType is the Content-Type a fixture is served with.
func fixtureContentType(name string) string {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".sse":
		return "text/event-stream"
	case ".json":
		return "application/json"
	}
	return "application/octet-stream"
}

// fixtureUnits splits a fixture into the units it is paced by: the events of
// an SSE file (each through its blank line), the whole of any other file.
// The units concatenate to the file byte for byte.
func fixtureUnits(name string, data []byte) [][]byte {
	if fixtureContentType(name) != "text/event-stream" {
		return [][]byte{data}
	}
	var units [][]byte
	start, lineStart := 0, 0
	for i := 0; i < len(data); i++ {
		if data[i] != '\n' {
			continue
		}
		line := data[lineStart:i]
		lineStart = i + 1
		if len(line) == 0 || (len(line) == 1 && line[0] == '\r') {
			units = append(units, data[start:i+1])
			start = i + 1
		}
	}
	if start < len(data) {
		units = append(units, data[start:])
	}
	return units
}
