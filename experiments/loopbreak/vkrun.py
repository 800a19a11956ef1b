"""Run one SPIR-V compute shader on a Vulkan driver with no wgpu or naga in between (the `vulkan` package
from PyPI: cffi bindings of the loader). Storage buffers bind in order at set 0, bindings 0..n-1; they are
host-visible, so the arrays are written before and read after one dispatch.

    python3 vkrun.py shader.spv ENTRY GROUPS   # runs it with the probe's test_for_break3 buffers

`VKRUN_DEVICE=<name part>` picks the physical device (default: the first discrete GPU, else the first).
"""
from __future__ import annotations

import os
import sys

import numpy as np
import vulkan as vk


class Runner:
    """One instance, device and compute queue; `run` creates and frees everything else per call."""

    def __init__(self):
        app = vk.VkApplicationInfo(sType=vk.VK_STRUCTURE_TYPE_APPLICATION_INFO, pApplicationName="vkrun",
                                   apiVersion=vk.VK_MAKE_VERSION(1, 3, 0))
        self.instance = vk.vkCreateInstance(vk.VkInstanceCreateInfo(
            sType=vk.VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, pApplicationInfo=app), None)
        devices = vk.vkEnumeratePhysicalDevices(self.instance)
        want = os.environ.get("VKRUN_DEVICE", "")
        props = [vk.vkGetPhysicalDeviceProperties(d) for d in devices]
        pick = None
        for d, p in zip(devices, props):
            if want and want.lower() in p.deviceName.lower():
                pick = (d, p)
                break
        if pick is None and not want:
            pick = next(((d, p) for d, p in zip(devices, props)
                         if p.deviceType == vk.VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU), (devices[0], props[0]))
        self.pdev, p = pick
        self.name = f"{p.deviceName} (driver {p.driverVersion:#x}, api {p.apiVersion:#x})"
        families = vk.vkGetPhysicalDeviceQueueFamilyProperties(self.pdev)
        self.family = next(i for i, f in enumerate(families) if f.queueFlags & vk.VK_QUEUE_COMPUTE_BIT)
        qci = vk.VkDeviceQueueCreateInfo(sType=vk.VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                         queueFamilyIndex=self.family, queueCount=1, pQueuePriorities=[1.0])
        self.device = vk.vkCreateDevice(self.pdev, vk.VkDeviceCreateInfo(
            sType=vk.VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, queueCreateInfoCount=1, pQueueCreateInfos=[qci]), None)
        self.queue = vk.vkGetDeviceQueue(self.device, self.family, 0)
        self.memprops = vk.vkGetPhysicalDeviceMemoryProperties(self.pdev)

    def _memtype(self, bits: int) -> int:
        want = vk.VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | vk.VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
        for i in range(self.memprops.memoryTypeCount):
            if bits & (1 << i) and (self.memprops.memoryTypes[i].propertyFlags & want) == want:
                return i
        raise RuntimeError("no host-visible coherent memory type")

    def run(self, spv: bytes, entry: str, arrays: list[np.ndarray], groups: int) -> list[np.ndarray]:
        d = self.device
        bufs, mems = [], []
        for a in arrays:
            b = vk.vkCreateBuffer(d, vk.VkBufferCreateInfo(
                sType=vk.VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, size=max(a.nbytes, 16),
                usage=vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, sharingMode=vk.VK_SHARING_MODE_EXCLUSIVE), None)
            req = vk.vkGetBufferMemoryRequirements(d, b)
            m = vk.vkAllocateMemory(d, vk.VkMemoryAllocateInfo(
                sType=vk.VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, allocationSize=req.size,
                memoryTypeIndex=self._memtype(req.memoryTypeBits)), None)
            vk.vkBindBufferMemory(d, b, m, 0)
            ptr = vk.vkMapMemory(d, m, 0, a.nbytes, 0)
            ptr[:] = a.tobytes()
            vk.vkUnmapMemory(d, m)
            bufs.append(b)
            mems.append(m)
        binds = [vk.VkDescriptorSetLayoutBinding(binding=i, descriptorType=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                                 descriptorCount=1, stageFlags=vk.VK_SHADER_STAGE_COMPUTE_BIT)
                 for i in range(len(arrays))]
        dsl = vk.vkCreateDescriptorSetLayout(d, vk.VkDescriptorSetLayoutCreateInfo(
            sType=vk.VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO, bindingCount=len(binds),
            pBindings=binds), None)
        layout = vk.vkCreatePipelineLayout(d, vk.VkPipelineLayoutCreateInfo(
            sType=vk.VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, setLayoutCount=1, pSetLayouts=[dsl]), None)
        module = vk.vkCreateShaderModule(d, vk.VkShaderModuleCreateInfo(
            sType=vk.VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, codeSize=len(spv), pCode=spv), None)
        stage = vk.VkPipelineShaderStageCreateInfo(sType=vk.VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                                                   stage=vk.VK_SHADER_STAGE_COMPUTE_BIT, module=module, pName=entry)
        pipe = vk.vkCreateComputePipelines(d, None, 1, [vk.VkComputePipelineCreateInfo(
            sType=vk.VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO, stage=stage, layout=layout)], None)[0]
        pool = vk.vkCreateDescriptorPool(d, vk.VkDescriptorPoolCreateInfo(
            sType=vk.VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO, maxSets=1, poolSizeCount=1,
            pPoolSizes=[vk.VkDescriptorPoolSize(type=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                                descriptorCount=len(arrays))]), None)
        dset = vk.vkAllocateDescriptorSets(d, vk.VkDescriptorSetAllocateInfo(
            sType=vk.VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO, descriptorPool=pool, descriptorSetCount=1,
            pSetLayouts=[dsl]))[0]
        writes = [vk.VkWriteDescriptorSet(sType=vk.VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, dstSet=dset, dstBinding=i,
                                          descriptorCount=1, descriptorType=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                          pBufferInfo=[vk.VkDescriptorBufferInfo(buffer=b, offset=0,
                                                                                 range=0xFFFFFFFFFFFFFFFF)])
                  for i, b in enumerate(bufs)]
        vk.vkUpdateDescriptorSets(d, len(writes), writes, 0, None)
        cpool = vk.vkCreateCommandPool(d, vk.VkCommandPoolCreateInfo(
            sType=vk.VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, queueFamilyIndex=self.family), None)
        cmd = vk.vkAllocateCommandBuffers(d, vk.VkCommandBufferAllocateInfo(
            sType=vk.VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, commandPool=cpool,
            level=vk.VK_COMMAND_BUFFER_LEVEL_PRIMARY, commandBufferCount=1))[0]
        vk.vkBeginCommandBuffer(cmd, vk.VkCommandBufferBeginInfo(sType=vk.VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO))
        vk.vkCmdBindPipeline(cmd, vk.VK_PIPELINE_BIND_POINT_COMPUTE, pipe)
        vk.vkCmdBindDescriptorSets(cmd, vk.VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, [dset], 0, None)
        vk.vkCmdDispatch(cmd, groups, 1, 1)
        vk.vkEndCommandBuffer(cmd)
        fence = vk.vkCreateFence(d, vk.VkFenceCreateInfo(sType=vk.VK_STRUCTURE_TYPE_FENCE_CREATE_INFO), None)
        vk.vkQueueSubmit(self.queue, 1, [vk.VkSubmitInfo(sType=vk.VK_STRUCTURE_TYPE_SUBMIT_INFO,
                                                         commandBufferCount=1, pCommandBuffers=[cmd])], fence)
        vk.vkWaitForFences(d, 1, [fence], vk.VK_TRUE, 10 ** 10)
        out = []
        for a, m in zip(arrays, mems):
            ptr = vk.vkMapMemory(d, m, 0, a.nbytes, 0)
            out.append(np.frombuffer(bytes(ptr[:a.nbytes]), dtype=a.dtype).reshape(a.shape).copy())
            vk.vkUnmapMemory(d, m)
        vk.vkDestroyFence(d, fence, None)
        vk.vkDestroyCommandPool(d, cpool, None)
        vk.vkDestroyDescriptorPool(d, pool, None)
        vk.vkDestroyPipeline(d, pipe, None)
        vk.vkDestroyShaderModule(d, module, None)
        vk.vkDestroyPipelineLayout(d, layout, None)
        vk.vkDestroyDescriptorSetLayout(d, dsl, None)
        for b, m in zip(bufs, mems):
            vk.vkDestroyBuffer(d, b, None)
            vk.vkFreeMemory(d, m, None)
        return out


if __name__ == "__main__":
    r = Runner()
    spv = open(sys.argv[1], "rb").read()
    x = np.zeros((8, 8), np.int32)
    status = np.zeros(4, np.uint32)
    print(r.name)
    print(r.run(spv, sys.argv[2], [x, status], int(sys.argv[3]))[0])
