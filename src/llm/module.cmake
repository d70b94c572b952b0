kforge_module(llm DEPS kforge_common PRIVATE_DEPS CURL::libcurl)
