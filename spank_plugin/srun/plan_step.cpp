#include "srun/plan_step.hpp"

#include "base/quote.hpp"
#include "planner/planner.hpp"
#include "site/site_defaults.hpp"
#include "srun/allocation_request.hpp"
#include "srun/multi_prog.hpp"

#include <set>

namespace stepmap::plugin {

WrittenRequest writtenRequest(const StepmapOptions &options, const EnvironmentValues &psi,
                              const SitePolicy &policy) {
    WrittenRequest written;
    written.options.host = options.host;
    written.options.hostfile = options.hostfile;
    written.options.apps = {
        AppOptions{std::nullopt, options.mapBy, options.rankBy, options.bindTo}};
    const bool parastation = options.overbook || options.loopNodesFirst || options.nodesSort ||
                             options.tpp || firstPsiVariable(psi).has_value();
    written.siteDefaults = fillSiteDefaults(policy, written.options.apps.front(), parastation);
    return written;
}

Expected<StepRequest> buildStepRequest(const WrittenRequest &written, const StepRequestInput &input,
                                       const StepFileReader &readFile) {
    std::optional<int> np;
    if (input.ntasks) {
        auto parsed = parseProcessCount(*input.ntasks);
        if (!parsed)
            return UserError{"-n/--ntasks: " + parsed.error().message};
        np = parsed.value();
    }
    // srun's messages quote values and put the option and value before any
    // parser's message (mapper/request/request_options.hpp).
    constexpr OptionWording kWording{.quoteValues = true, .mapFileNamesValue = false};
    auto built = buildRequest(written.options, readFile, kWording);
    if (!built)
        return built.error();
    StepRequest step{std::move(built.value()), {}};
    PlanRequest &req = step.request;
    req.np = np;
    if (input.multiProgFile) {
        // srun --multi-prog: each line of its file is an application context.
        const std::string &file = *input.multiProgFile;
        auto text = readFile(file);
        if (!text)
            return unreadableFile("--multi-prog's file", file, text.error());
        auto apps = multiProgApps(text.value(), file);
        if (!apps)
            return apps.error();
        int total = 0;
        for (int n : apps.value()) {
            AppRequest app;
            app.np = n;
            req.apps.push_back(app);
            total += n;
        }
        if (req.np && *req.np != total)
            return UserError{"-n " + std::to_string(*req.np) + " differs from the " +
                             std::to_string(total) + " ranks of --multi-prog file " +
                             quoted(file, kShownPathBytes) + "; give -n " + std::to_string(total)};
        req.np.reset();
    }
    auto notes = applyParaStationEnvironment(input.options, input.psi, readFile, req);
    if (!notes)
        return notes.error();
    step.psiNotes = std::move(notes.value());
    return step;
}

Expected<SrunTaskCount> srunTaskCount(const PlanRequest &request, bool bySitePolicy,
                                      const SrunEnvironment &environment) {
    SrunTaskCount count;
    count.applies = bySitePolicy && !request.np && request.apps.empty();
    if (!count.applies)
        return count;
    for (const char *name : {"SLURM_NTASKS", "SLURM_NPROCS"})
        if (auto it = environment.find(name); it != environment.end() && !count.jobTasks) {
            auto n = parseProcessCount(it->second);
            if (!n)
                return UserError{std::string(name) + "=" + it->second + ": " + n.error().message};
            count.jobTasks = n.value();
        }
    return count;
}

Expected<StepNodeRequest> stepNodeRequest(const SrunCommandLine &cmd,
                                          const StepFileReader &readFile) {
    StepNodeRequest req;
    for (const SrunOption &option : cmd.options) {
        if (option.role != SrunOptionRole::StepNodes)
            continue;
        const std::string value = option.value.value_or("");
        if (option.name == "nodes") {
            auto count = parseNodeCount(option.written, value);
            if (!count)
                return count.error();
            req.count = count.value();
            req.countOption = option.written;
            continue;
        }
        auto names = parseNodeNames(option.written, value, readFile);
        if (!names)
            return names.error();
        if (option.name == "nodelist") {
            req.include = std::move(names.value());
            req.includeOption = option.written;
        } else {
            req.exclude = std::move(names.value());
            req.excludeOption = option.written;
        }
    }
    return req;
}

Expected<PlannedStep> planStep(PlanRequest request, Allocation allocation, const StepRules &rules,
                               const SitePolicy &policy) {
    if (auto mapped = checkUserCpuMap(policy, request); !mapped)
        return mapped.error();
    auto divided = divideSlotsByCpusPerTask(std::move(allocation), request, rules.cpusPerTask);
    if (!divided)
        return divided.error();
    auto p = planJob(divided.value(), request);
    if (!p)
        return p.error();
    if (auto agreed = checkTasksPerNode(p.value().plan, rules.tasksPerNode); !agreed)
        return agreed.error();
    if (auto within = checkSitePolicy(policy, p.value().plan, rules.overbookBy); !within)
        return within.error();
    return PlannedStep{std::move(p.value().plan), std::move(p.value().report),
                       std::move(divided.value()), std::move(request)};
}

std::optional<CpusPerTask> cpusPerTask(const SrunCommandLine &cmd,
                                       const SrunEnvironment &environment,
                                       const std::string &cpusPerTaskVariable) {
    if (const SrunOption *c = cmd.last("cpus-per-task"); c && c->value)
        return CpusPerTask{*c->value, c->written + " " + *c->value};
    if (auto v = environment.find(cpusPerTaskVariable); v != environment.end())
        return CpusPerTask{v->second, cpusPerTaskVariable + "=" + v->second};
    return std::nullopt;
}

std::optional<WrittenSetting> tasksPerNode(const SrunCommandLine &cmd) {
    const SrunOption *perNode =
        cmd.last("ntasks-per-node") ? cmd.last("ntasks-per-node") : cmd.last("tasks-per-node");
    if (!perNode)
        return std::nullopt;
    return WrittenSetting{perNode->written, perNode->value.value_or("")};
}

Expected<void> checkStepAgainstPlan(const LaunchPlan &plan, const CreatedStep &step) {
    std::set<std::uint32_t> used;
    for (auto &r : plan.ranks)
        used.insert(r.node);
    if (step.tasks == plan.ranks.size() && step.nodes == used.size())
        return {};
    return UserError{"Slurm created step " + std::to_string(step.jobId) + "." +
                     std::to_string(step.stepId) + " with " + std::to_string(step.tasks) +
                     " tasks on " + std::to_string(step.nodes) + " nodes, but the plan has " +
                     std::to_string(plan.ranks.size()) + " tasks on " +
                     std::to_string(used.size()) +
                     " nodes; not starting a layout that differs from the plan (is -n consistent "
                     "with --host/--hostfile?)"};
}

} // namespace stepmap::plugin
