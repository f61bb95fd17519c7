#include "committed_records.hpp"

#include "modexless/record_check.hpp"
#include "modexless/tcp_record.hpp"

#include <memory>

namespace stepmap::server {

namespace {

using modexless::OpenMpiLayout;

struct Walk : std::enable_shared_from_this<Walk> {
    std::vector<ExpectedRecords> ranks;
    ReadCommitted read;
    std::function<void(std::optional<RecordMismatch>)> done;
    std::size_t next = 0;

    void step() {
        if (next == ranks.size()) {
            done(std::nullopt);
            return;
        }
        const std::uint32_t rank = ranks[next].rank;
        auto self = shared_from_this();
        read(rank, std::string(modexless::tcpModexKey(OpenMpiLayout::v41)),
             [self, rank](std::optional<std::string> v41) {
                 if (v41) {
                     self->judge(OpenMpiLayout::v41, *v41);
                     return;
                 }
                 self->read(rank, std::string(modexless::tcpModexKey(OpenMpiLayout::v50)),
                            [self](std::optional<std::string> v50) {
                                if (v50)
                                    self->judge(OpenMpiLayout::v50, *v50);
                                else
                                    self->pass();
                            });
             });
    }

    void judge(OpenMpiLayout layout, const std::string &committed) {
        const ExpectedRecords &r = ranks[next];
        const std::string &expected = layout == OpenMpiLayout::v41 ? r.v41 : r.v50;
        if (auto differs = modexless::tcpRecordDifference(layout, committed, expected)) {
            done(RecordMismatch{r.rank, modexless::tcpRecordMismatchLine(r.rank, *differs)});
            return;
        }
        pass();
    }

    void pass() {
        ++next;
        step();
    }
};

} // namespace

void checkCommittedRecords(std::vector<ExpectedRecords> ranks, ReadCommitted read,
                           std::function<void(std::optional<RecordMismatch>)> done) {
    auto walk = std::make_shared<Walk>();
    walk->ranks = std::move(ranks);
    walk->read = std::move(read);
    walk->done = std::move(done);
    walk->step();
}

} // namespace stepmap::server
