# toolgate worker image: a static binary on distroless (no shell, non-root).
FROM golang:1.26.8-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/toolgate ./cmd/toolgate

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/toolgate /toolgate
USER nonroot:nonroot
ENTRYPOINT ["/toolgate"]
CMD ["worker", "--setup"]
