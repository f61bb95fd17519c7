#pragma once

// One owner for a PMIx info list under construction (PMIx_Info_list_*), with
// typed adders; a failure to add throws (registration reports it).

#include <pmix.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace stepmap::server {

// One owner for a PMIx info list under construction.
class InfoList {
public:
    InfoList() : list_(PMIx_Info_list_start()) {}
    ~InfoList() {
        if (list_)
            PMIx_Info_list_release(list_);
    }
    InfoList(const InfoList &) = delete;
    InfoList &operator=(const InfoList &) = delete;

    void add(const char *key, const void *value, pmix_data_type_t type) {
        pmix_status_t rc = PMIx_Info_list_add(list_, key, value, type);
        if (rc != PMIX_SUCCESS)
            throw std::runtime_error(std::string("cannot add PMIx key ") + key + ": " +
                                     PMIx_Error_string(rc));
    }
    void addString(const char *key, const std::string &v) { add(key, v.c_str(), PMIX_STRING); }
    void addU32(const char *key, std::uint32_t v) { add(key, &v, PMIX_UINT32); }
    void addU16(const char *key, std::uint16_t v) { add(key, &v, PMIX_UINT16); }
    void addRank(const char *key, pmix_rank_t v) { add(key, &v, PMIX_PROC_RANK); }
    void addBool(const char *key, bool v) { add(key, &v, PMIX_BOOL); }
    void addSize(const char *key, std::size_t v) { add(key, &v, PMIX_SIZE); }
    void addBytes(const char *key, const std::string &bytes) {
        pmix_byte_object_t object{const_cast<char *>(bytes.data()), bytes.size()};
        add(key, &object, PMIX_BYTE_OBJECT);
    }
    // Appends the converted list as one PMIX_DATA_ARRAY value under key.
    void addList(const char *key, InfoList &sub) {
        pmix_data_array_t darray;
        sub.convert(darray);
        pmix_status_t rc = PMIx_Info_list_add(list_, key, &darray, PMIX_DATA_ARRAY);
        PMIx_Data_array_destruct(&darray);
        if (rc != PMIX_SUCCESS)
            throw std::runtime_error(std::string("cannot add PMIx array ") + key);
    }
    void convert(pmix_data_array_t &out) {
        PMIX_DATA_ARRAY_CONSTRUCT(&out, 0, PMIX_INFO);
        pmix_status_t rc = PMIx_Info_list_convert(list_, &out);
        if (rc != PMIX_SUCCESS)
            throw std::runtime_error("cannot convert PMIx info list");
    }

private:
    void *list_;
};

} // namespace stepmap::server
