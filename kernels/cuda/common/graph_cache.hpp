// Instantiated CUDA graphs by key, owned, at most `capacity` of them: beyond it the least
// recently used is dropped. A backend keys a graph by everything the captured launches baked in
// (sizes, scalars, buffer addresses), so a key that matches is a graph that may be replayed.
// capture_graph records what a function enqueues on a stream into a new instantiated graph.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdio>
#include <utility>
#include <vector>

#include "kernels/cuda/common/cuda_check.hpp"

namespace rbfpde::gpu {

// Captures what enqueue() puts on `stream` and instantiates it. When enqueue or the capture
// fails, the capture is ended, its graph dropped, and the error thrown.
template <class Enqueue>
cudaGraphExec_t capture_graph(cudaStream_t stream, cudaStreamCaptureMode mode, Enqueue&& enqueue) {
  CUDA_CHECK(cudaStreamBeginCapture(stream, mode));
  cudaGraph_t graph = nullptr;
  try {
    enqueue();
  } catch (...) {
    (void)cudaStreamEndCapture(stream, &graph);
    if (graph) (void)cudaGraphDestroy(graph);
    throw;
  }
  CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec = nullptr;
  const cudaError_t status = cudaGraphInstantiate(&exec, graph, 0);
  (void)cudaGraphDestroy(graph);
  CUDA_CHECK(status);
  return exec;
}

// Key: equality-comparable.
template <class Key>
class GraphCache {
 public:
  explicit GraphCache(std::size_t capacity) : capacity_(capacity) {}
  ~GraphCache() { clear(); }
  GraphCache(const GraphCache&) = delete;
  GraphCache& operator=(const GraphCache&) = delete;

  // The graph under key (marked used), or null.
  cudaGraphExec_t find(const Key& key) {
    for (Entry& e : entries_)
      if (e.key == key) {
        e.last_used = ++clock_;
        return e.exec;
      }
    return nullptr;
  }

  // Takes exec under key, dropping the least recently used graph when the cache is full.
  void insert(Key key, cudaGraphExec_t exec) {
    if (entries_.size() >= capacity_ && !entries_.empty()) {
      std::size_t oldest = 0;
      for (std::size_t i = 1; i < entries_.size(); ++i)
        if (entries_[i].last_used < entries_[oldest].last_used) oldest = i;
      destroy(entries_[oldest].exec);
      entries_.erase(entries_.begin() + std::ptrdiff_t(oldest));
    }
    entries_.push_back({std::move(key), exec, ++clock_});
  }

  // The graph under key, captured from enqueue() on `stream` first if there is none.
  template <class Enqueue>
  cudaGraphExec_t get_or_capture(const Key& key, cudaStream_t stream, cudaStreamCaptureMode mode,
                                 Enqueue&& enqueue) {
    if (cudaGraphExec_t exec = find(key)) return exec;
    cudaGraphExec_t exec = capture_graph(stream, mode, std::forward<Enqueue>(enqueue));
    insert(key, exec);
    return exec;
  }

  void clear() {
    for (Entry& e : entries_) destroy(e.exec);
    entries_.clear();
  }

  std::size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    Key key;
    cudaGraphExec_t exec;
    unsigned long long last_used;
  };
  static void destroy(cudaGraphExec_t exec) {
    if (cudaGraphExecDestroy(exec) != cudaSuccess)
      std::fprintf(stderr, "rbfpde: cudaGraphExecDestroy failed\n");
  }

  std::size_t capacity_;
  std::vector<Entry> entries_;
  unsigned long long clock_ = 0;
};

}  // namespace rbfpde::gpu
