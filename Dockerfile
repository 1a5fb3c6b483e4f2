# syntax=docker/dockerfile:1

# Build a static binary: the SQLite driver is pure Go, so CGO is not needed.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o /papergraph ./cmd/papergraph
# The final image has no shell to create the volume's mount point with.
RUN mkdir /data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /papergraph /papergraph
# Owned by the nonroot user (65532), so the SQLite file and its WAL can be
# written there when no volume is mounted, or a fresh named volume is.
COPY --from=build --chown=65532:65532 /data /data
USER 65532:65532
EXPOSE 8080
VOLUME /data
ENTRYPOINT ["/papergraph"]
CMD ["serve", "--addr", ":8080", "--db", "/data/papergraph.db"]
