#include "protocol/timeline/exchange_counters.hpp"

#include "protocol/wire/byte_buffer.hpp"

#include <algorithm>
#include <limits>

namespace stepmap::timeline {

namespace {

template <class T> void addSaturating(T &to, T value) {
    to = value > std::numeric_limits<T>::max() - to ? std::numeric_limits<T>::max() : to + value;
}

// "1 barrier", "2 barriers".
std::string counted(std::uint64_t n, const std::string &one, const std::string &many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string countsText(const ExchangeCounters &c) {
    return counted(c.dataFences, "data fence", "data fences") + " (" +
           counted(c.fenceBytes, "byte", "bytes") + "), " +
           counted(c.barriers, "barrier", "barriers") + ", " +
           std::to_string(c.modexLocal + std::uint64_t{c.modexRemote}) + " direct modex (" +
           std::to_string(c.modexLocal) + " local, " + std::to_string(c.modexRemote) +
           " remote), " + std::to_string(c.modexAnswered) +
           " answered for other nodes; network: " + counted(c.bytesSent, "byte", "bytes") +
           " sent, " + std::to_string(c.bytesReceived) + " received";
}

} // namespace

ExchangeCounters &ExchangeCounters::operator+=(const ExchangeCounters &o) {
    addSaturating(dataFences, o.dataFences);
    addSaturating(barriers, o.barriers);
    addSaturating(fenceBytes, o.fenceBytes);
    addSaturating(modexLocal, o.modexLocal);
    addSaturating(modexRemote, o.modexRemote);
    addSaturating(modexAnswered, o.modexAnswered);
    addSaturating(bytesSent, o.bytesSent);
    addSaturating(bytesReceived, o.bytesReceived);
    return *this;
}

std::string encodeCounters(const ExchangeCounters &c) {
    wire::ByteWriter w;
    w.u32(c.dataFences);
    w.u32(c.barriers);
    w.u64(c.fenceBytes);
    w.u32(c.modexLocal);
    w.u32(c.modexRemote);
    w.u32(c.modexAnswered);
    w.u64(c.bytesSent);
    w.u64(c.bytesReceived);
    return std::string(w.bytes().begin(), w.bytes().end());
}

std::optional<ExchangeCounters> decodeCounters(const std::string &payload) {
    wire::ByteReader r(reinterpret_cast<const std::uint8_t *>(payload.data()), payload.size());
    auto dataFences = r.u32(), barriers = r.u32();
    auto fenceBytes = r.u64();
    auto local = r.u32(), remote = r.u32(), answered = r.u32();
    auto sent = r.u64(), received = r.u64();
    if (!received || !r.atEnd())
        return std::nullopt;
    return ExchangeCounters{*dataFences, *barriers, *fenceBytes, *local,
                            *remote,     *answered, *sent,       *received};
}

std::string describeNodeExchange(const ExchangeCounters &counters) {
    return "exchange: " + countsText(counters);
}

ExchangeCounters stepExchange(const std::map<std::uint32_t, ExchangeCounters> &nodes) {
    ExchangeCounters step;
    for (const auto &[node, c] : nodes) {
        step.dataFences = std::max(step.dataFences, c.dataFences);
        step.barriers = std::max(step.barriers, c.barriers);
        step.fenceBytes = std::max(step.fenceBytes, c.fenceBytes);
        ExchangeCounters summed = c;
        summed.dataFences = summed.barriers = 0;
        summed.fenceBytes = 0;
        step += summed;
    }
    return step;
}

std::string describeStepExchange(const std::map<std::uint32_t, ExchangeCounters> &nodes,
                                 std::size_t servers) {
    return "  exchange (" + std::to_string(nodes.size()) + " of " + std::to_string(servers) +
           " node servers reported; fences per step, direct modex and bytes summed over the "
           "nodes): " +
           countsText(stepExchange(nodes));
}

} // namespace stepmap::timeline
