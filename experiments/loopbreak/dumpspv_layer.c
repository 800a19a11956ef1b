/* A Vulkan layer that writes every SPIR-V module an application creates to $GFXRT_SPV_DUMP/NNN.spv, so the
 * exact SPIR-V wgpu-native's naga hands to a driver can be read (spirv-dis) and replayed (vkrun.py).
 * Build: cc -shared -fPIC -O1 -o libdumpspv.so dumpspv_layer.c
 * Use:   VK_LAYER_PATH=<dir with dumpspv_layer.json> VK_INSTANCE_LAYERS=VK_LAYER_GFXRT_dump GFXRT_SPV_DUMP=<dir> ... */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vulkan/vulkan.h>
#include <vulkan/vk_layer.h>

static PFN_vkGetInstanceProcAddr next_gipa;
static PFN_vkGetDeviceProcAddr next_gdpa;
static PFN_vkCreateShaderModule next_create_shader;
static int counter;

#define EXPORT __attribute__((visibility("default")))

static VKAPI_ATTR VkResult VKAPI_CALL dl_CreateShaderModule(VkDevice dev, const VkShaderModuleCreateInfo *ci,
                                                            const VkAllocationCallbacks *alloc, VkShaderModule *out) {
    const char *dir = getenv("GFXRT_SPV_DUMP");
    if (dir) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%03d.spv", dir, counter++);
        FILE *f = fopen(path, "wb");
        if (f) { fwrite(ci->pCode, 1, ci->codeSize, f); fclose(f); }
    }
    return next_create_shader(dev, ci, alloc, out);
}

static VKAPI_ATTR VkResult VKAPI_CALL dl_CreateInstance(const VkInstanceCreateInfo *ci, const VkAllocationCallbacks *alloc,
                                                        VkInstance *inst) {
    VkLayerInstanceCreateInfo *li = (VkLayerInstanceCreateInfo *)ci->pNext;
    while (li && !(li->sType == VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO && li->function == VK_LAYER_LINK_INFO))
        li = (VkLayerInstanceCreateInfo *)li->pNext;
    if (!li) return VK_ERROR_INITIALIZATION_FAILED;
    next_gipa = li->u.pLayerInfo->pfnNextGetInstanceProcAddr;
    li->u.pLayerInfo = li->u.pLayerInfo->pNext;
    PFN_vkCreateInstance create = (PFN_vkCreateInstance)next_gipa(VK_NULL_HANDLE, "vkCreateInstance");
    return create(ci, alloc, inst);
}

static VKAPI_ATTR VkResult VKAPI_CALL dl_CreateDevice(VkPhysicalDevice pd, const VkDeviceCreateInfo *ci,
                                                      const VkAllocationCallbacks *alloc, VkDevice *dev) {
    VkLayerDeviceCreateInfo *li = (VkLayerDeviceCreateInfo *)ci->pNext;
    while (li && !(li->sType == VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO && li->function == VK_LAYER_LINK_INFO))
        li = (VkLayerDeviceCreateInfo *)li->pNext;
    if (!li) return VK_ERROR_INITIALIZATION_FAILED;
    PFN_vkGetInstanceProcAddr gipa = li->u.pLayerInfo->pfnNextGetInstanceProcAddr;
    next_gdpa = li->u.pLayerInfo->pfnNextGetDeviceProcAddr;
    li->u.pLayerInfo = li->u.pLayerInfo->pNext;
    PFN_vkCreateDevice create = (PFN_vkCreateDevice)gipa(VK_NULL_HANDLE, "vkCreateDevice");
    VkResult r = create(pd, ci, alloc, dev);
    if (r == VK_SUCCESS) next_create_shader = (PFN_vkCreateShaderModule)next_gdpa(*dev, "vkCreateShaderModule");
    return r;
}

EXPORT VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL dl_GetDeviceProcAddr(VkDevice dev, const char *name) {
    if (!strcmp(name, "vkGetDeviceProcAddr")) return (PFN_vkVoidFunction)dl_GetDeviceProcAddr;
    if (!strcmp(name, "vkCreateShaderModule")) return (PFN_vkVoidFunction)dl_CreateShaderModule;
    return next_gdpa(dev, name);
}

EXPORT VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL dl_GetInstanceProcAddr(VkInstance inst, const char *name) {
    if (!strcmp(name, "vkGetInstanceProcAddr")) return (PFN_vkVoidFunction)dl_GetInstanceProcAddr;
    if (!strcmp(name, "vkCreateInstance")) return (PFN_vkVoidFunction)dl_CreateInstance;
    if (!strcmp(name, "vkCreateDevice")) return (PFN_vkVoidFunction)dl_CreateDevice;
    if (!strcmp(name, "vkGetDeviceProcAddr")) return (PFN_vkVoidFunction)dl_GetDeviceProcAddr;
    if (!strcmp(name, "vkCreateShaderModule")) return (PFN_vkVoidFunction)dl_CreateShaderModule;
    return next_gipa(inst, name);
}
