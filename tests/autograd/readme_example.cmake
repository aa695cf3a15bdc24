# The README's gradcheck example ("## Checking your own gradients") is compiled and run as
# written: its first ```cpp block is copied into the build folder at configure time (and
# again whenever README.md changes), built against attend, and run as a test.
set(readme ${PROJECT_SOURCE_DIR}/README.md)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${readme})
file(READ ${readme} readme_text)
string(FIND "${readme_text}" "## Checking your own gradients" section)
set(example_code "#error README.md has no ```cpp block under \"## Checking your own gradients\"\n")
if(section GREATER -1)
  string(SUBSTRING "${readme_text}" ${section} -1 readme_text)
  string(FIND "${readme_text}" "```cpp\n" begin)
  if(begin GREATER -1)
    math(EXPR begin "${begin} + 7")
    string(SUBSTRING "${readme_text}" ${begin} -1 readme_text)
    string(FIND "${readme_text}" "\n```" end)
    if(end GREATER -1)
      math(EXPR end "${end} + 1")
      string(SUBSTRING "${readme_text}" 0 ${end} example_code)
    endif()
  endif()
endif()
# CONFIGURE rewrites the file only when the code changed, so it is not rebuilt every time.
file(CONFIGURE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/readme_gradcheck.cpp CONTENT "${example_code}"
     @ONLY)
add_executable(readme_gradcheck ${CMAKE_CURRENT_BINARY_DIR}/readme_gradcheck.cpp)
target_link_libraries(readme_gradcheck PRIVATE attend)
add_test(NAME "autograd:README gradcheck example" COMMAND readme_gradcheck)
set_tests_properties("autograd:README gradcheck example" PROPERTIES
                     LABELS autograd PASS_REGULAR_EXPRESSION "^gradcheck passed: ")
