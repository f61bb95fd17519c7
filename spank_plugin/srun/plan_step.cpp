#include "srun/plan_step.hpp"

#include "allocation_request.hpp"
#include "base/quote.hpp"
#include "multi_prog.hpp"
#include "planner/planner.hpp"
#include "site/site_defaults.hpp"

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

} // namespace stepmap::plugin
