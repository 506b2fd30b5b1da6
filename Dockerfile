# toolgate worker image: a static binary on distroless (no shell, non-root).
FROM golang:1.26.8-bookworm AS build
WORKDIR /src
# The workspace: the library module, cmd/toolgate's (the CLI and its embedded server) and the
# browser test module, whose go.mod files alone decide what to download.
COPY go.work go.mod go.sum ./
COPY cmd/toolgate/go.mod cmd/toolgate/go.sum cmd/toolgate/
COPY internal/uitest/go.mod internal/uitest/go.sum internal/uitest/
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/toolgate ./cmd/toolgate

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/toolgate /toolgate
USER nonroot:nonroot
ENTRYPOINT ["/toolgate"]
CMD ["worker", "--setup"]
