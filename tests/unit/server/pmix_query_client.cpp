// A PMIx client for the PMIx host's tests: joins the server named by its
// PMIX_* environment, then does what each argument says, printing one line
// per argument ("ARG=VALUE", VALUE "!<PMIx error>" on failure):
//   R/KEY        PMIx_Get of KEY for rank R ('*': the job, wildcard rank)
//   node/KEY     the same with PMIX_NODE_INFO (this node's data)
//   node:H/KEY   the same for the node named H (PMIX_HOSTNAME qualifier)
// (a byte object prints as 0x<hex>, an array of infos as {KEY=VALUE;...},
// the lines of a string joined by '|')
//   appA/KEY     the same with PMIX_APP_INFO for application A
//   fence        puts "stepmap.test"=<rank>, commits, fences the whole job
//                collecting data
//   fence-with/R a fence of this rank and rank R, without data
//   remote/R     asks for rank R's "stepmap.test" (a direct modex for a
//                rank of another node)
//   abort        PMIx_Abort(7, "test abort")
//   publish/K/V  PMIx_Publish of K as the string V; publish-int/K/N as an int
//   lookup/K     PMIx_Lookup of K without waiting: "<value> from <rank>"
//   unpublish/K  PMIx_Unpublish of K
//   connect-with/R     PMIx_Connect of this rank and rank R
//   connect-other      PMIx_Connect with a process of another namespace
//   spawn/N      PMIx_Spawn of N copies of /bin/true ("ok:<their namespace>")
// The first line is "me=<rank>".

#include <pmix.h>

#include <cstdio>
#include <cstring>
#include <string>

namespace {

pmix_proc_t me;

std::string format(const pmix_value_t *v);

// Lower-case hex of each byte.
std::string hex(const char *bytes, size_t size) {
    static const char digits[] = "0123456789abcdef";
    std::string text;
    for (size_t i = 0; i < size; ++i) {
        const auto b = static_cast<unsigned char>(bytes[i]);
        text += digits[b >> 4];
        text += digits[b & 15];
    }
    return text;
}

// An array of infos as "{KEY=VALUE;KEY=VALUE}", nested as it comes.
std::string formatArray(const pmix_data_array_t *a) {
    if (!a || a->type != PMIX_INFO)
        return "(array)";
    std::string text = "{";
    const auto *infos = static_cast<const pmix_info_t *>(a->array);
    for (size_t i = 0; i < a->size; ++i)
        text += (i ? ";" : "") + std::string(infos[i].key) + "=" + format(&infos[i].value);
    return text + "}";
}

// Lines of a multi-line string joined by "|" (the output is one line).
std::string oneLine(const char *s) {
    std::string text = s ? s : "(null)";
    for (auto &c : text)
        if (c == '\n')
            c = '|';
    return text;
}

std::string format(const pmix_value_t *v) {
    switch (v->type) {
    case PMIX_STRING:
        return oneLine(v->data.string);
    case PMIX_SIZE:
        return std::to_string(v->data.size);
    case PMIX_LINK_STATE:
        return v->data.linkstate == PMIX_LINK_UP     ? "up"
               : v->data.linkstate == PMIX_LINK_DOWN ? "down"
                                                     : "unknown";
    case PMIX_BYTE_OBJECT:
        return "0x" + hex(v->data.bo.bytes, v->data.bo.size);
    case PMIX_DATA_ARRAY:
        return formatArray(v->data.darray);
    case PMIX_UINT32:
        return std::to_string(v->data.uint32);
    case PMIX_UINT16:
        return std::to_string(v->data.uint16);
    case PMIX_PROC_RANK:
        return std::to_string(v->data.rank);
    case PMIX_INT:
        return std::to_string(v->data.integer);
    case PMIX_BOOL:
        return v->data.flag ? "true" : "false";
    default:
        return "(type " + std::to_string(v->type) + ")";
    }
}

std::string get(pmix_rank_t rank, const std::string &key, pmix_info_t *info, size_t ninfo) {
    pmix_proc_t who;
    PMIX_LOAD_PROCID(&who, me.nspace, rank);
    pmix_value_t *value = nullptr;
    pmix_status_t rc = PMIx_Get(&who, key.c_str(), info, ninfo, &value);
    if (rc != PMIX_SUCCESS)
        return std::string("!") + PMIx_Error_string(rc);
    std::string text = format(value);
    PMIX_VALUE_RELEASE(value);
    return text;
}

std::string query(const std::string &arg) {
    auto slash = arg.find('/');
    std::string who = arg.substr(0, slash), key = arg.substr(slash + 1);
    pmix_info_t info[2];
    bool yes = true;
    if (who == "*")
        return get(PMIX_RANK_WILDCARD, key, nullptr, 0);
    if (who == "node") {
        PMIX_INFO_LOAD(&info[0], PMIX_NODE_INFO, &yes, PMIX_BOOL);
        return get(PMIX_RANK_WILDCARD, key, info, 1);
    }
    if (who.rfind("node:", 0) == 0) {
        PMIX_INFO_LOAD(&info[0], PMIX_NODE_INFO, &yes, PMIX_BOOL);
        PMIX_INFO_LOAD(&info[1], PMIX_HOSTNAME, who.substr(5).c_str(), PMIX_STRING);
        return get(PMIX_RANK_WILDCARD, key, info, 2);
    }
    if (who.rfind("app", 0) == 0) {
        std::uint32_t app = static_cast<std::uint32_t>(std::stoul(who.substr(3)));
        PMIX_INFO_LOAD(&info[0], PMIX_APP_INFO, &yes, PMIX_BOOL);
        PMIX_INFO_LOAD(&info[1], PMIX_APPNUM, &app, PMIX_UINT32);
        return get(PMIX_RANK_WILDCARD, key, info, 2);
    }
    return get(static_cast<pmix_rank_t>(std::stoul(who)), key, nullptr, 0);
}

std::string fence() {
    pmix_value_t value;
    std::string mine = std::to_string(me.rank);
    PMIX_VALUE_LOAD(&value, mine.c_str(), PMIX_STRING);
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, "stepmap.test", &value);
    PMIX_VALUE_DESTRUCT(&value);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Commit();
    pmix_info_t collect;
    bool yes = true;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Fence(nullptr, 0, &collect, 1);
    return rc == PMIX_SUCCESS ? "ok" : std::string("!") + PMIx_Error_string(rc);
}

std::string fenceWith(pmix_rank_t rank) {
    pmix_proc_t procs[2];
    PMIX_LOAD_PROCID(&procs[0], me.nspace, me.rank);
    PMIX_LOAD_PROCID(&procs[1], me.nspace, rank);
    pmix_status_t rc = PMIx_Fence(procs, 2, nullptr, 0);
    return rc == PMIX_SUCCESS ? "ok" : std::string("!") + PMIx_Error_string(rc);
}

std::string remote(pmix_rank_t rank) {
    pmix_info_t timeout;
    int seconds = 3;
    PMIX_INFO_LOAD(&timeout, PMIX_TIMEOUT, &seconds, PMIX_INT);
    return get(rank, "stepmap.test", &timeout, 1);
}

std::string status(pmix_status_t rc) {
    return rc == PMIX_SUCCESS ? "ok" : std::string("!") + PMIx_Error_string(rc);
}

// "K/V" of publish/K/V.
std::string publish(const std::string &keyValue, bool asInt) {
    const auto slash = keyValue.find('/');
    const std::string key = keyValue.substr(0, slash), text = keyValue.substr(slash + 1);
    pmix_info_t info;
    if (asInt) {
        int n = std::stoi(text);
        PMIX_INFO_LOAD(&info, key.c_str(), &n, PMIX_INT);
    } else {
        PMIX_INFO_LOAD(&info, key.c_str(), text.c_str(), PMIX_STRING);
    }
    pmix_status_t rc = PMIx_Publish(&info, 1);
    PMIX_INFO_DESTRUCT(&info);
    return status(rc);
}

std::string lookup(const std::string &key) {
    pmix_pdata_t data;
    PMIX_PDATA_CONSTRUCT(&data);
    PMIX_LOAD_KEY(data.key, key.c_str());
    pmix_status_t rc = PMIx_Lookup(&data, 1, nullptr, 0);
    std::string out = rc == PMIX_SUCCESS
                          ? format(&data.value) + " from " + std::to_string(data.proc.rank)
                          : status(rc);
    PMIX_PDATA_DESTRUCT(&data);
    return out;
}

std::string unpublish(const std::string &key) {
    char *keys[] = {const_cast<char *>(key.c_str()), nullptr};
    return status(PMIx_Unpublish(keys, nullptr, 0));
}

std::string connectWith(const char *nspace, pmix_rank_t rank) {
    pmix_proc_t procs[2];
    PMIX_LOAD_PROCID(&procs[0], me.nspace, me.rank);
    PMIX_LOAD_PROCID(&procs[1], nspace, rank);
    return status(PMIx_Connect(procs, 2, nullptr, 0));
}

std::string spawn(int copies) {
    pmix_app_t app;
    PMIX_APP_CONSTRUCT(&app);
    app.cmd = strdup("/bin/true");
    app.maxprocs = copies;
    char child[PMIX_MAX_NSLEN + 1] = "";
    pmix_status_t rc = PMIx_Spawn(nullptr, 0, &app, 1, child);
    PMIX_APP_DESTRUCT(&app);
    return rc == PMIX_SUCCESS ? "ok:" + std::string(child) : status(rc);
}

} // namespace

int main(int argc, char **argv) {
    pmix_status_t rc = PMIx_Init(&me, nullptr, 0);
    if (rc != PMIX_SUCCESS) {
        std::printf("me=!%s\n", PMIx_Error_string(rc));
        return 3;
    }
    std::printf("me=%u\n", me.rank);
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i], result;
        if (arg == "fence")
            result = fence();
        else if (arg.rfind("fence-with/", 0) == 0)
            result = fenceWith(static_cast<pmix_rank_t>(std::stoul(arg.substr(11))));
        else if (arg.rfind("remote/", 0) == 0)
            result = remote(static_cast<pmix_rank_t>(std::stoul(arg.substr(7))));
        else if (arg.rfind("publish/", 0) == 0)
            result = publish(arg.substr(8), false);
        else if (arg.rfind("publish-int/", 0) == 0)
            result = publish(arg.substr(12), true);
        else if (arg.rfind("lookup/", 0) == 0)
            result = lookup(arg.substr(7));
        else if (arg.rfind("unpublish/", 0) == 0)
            result = unpublish(arg.substr(10));
        else if (arg.rfind("connect-with/", 0) == 0)
            result = connectWith(me.nspace, static_cast<pmix_rank_t>(std::stoul(arg.substr(13))));
        else if (arg.rfind("spawn/", 0) == 0)
            result = spawn(std::stoi(arg.substr(6)));
        else if (arg == "connect-other")
            result = connectWith("another.step", 0);
        else if (arg == "abort")
            result = PMIx_Error_string(PMIx_Abort(7, "test abort", nullptr, 0));
        else
            result = query(arg);
        std::printf("%s=%s\n", arg.c_str(), result.c_str());
        std::fflush(stdout);
    }
    PMIx_Finalize(nullptr, 0);
    return 0;
}
